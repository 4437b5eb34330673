import type { Question, RagSource } from '@parley/domain';
import type { Status } from '@parley/domain';

/** The reply of a command that does not run a turn. */
export interface CommandReply {
  conversationId: string;
  status: Status;
  /** The position of the command's last event: pass it as `minPosition` to read your writes. */
  position: string;
}

/** The reply of a turn-running command (docs/api.md). `done` false means 202: the turn goes on. */
export interface TurnReply extends CommandReply {
  done: boolean;
  reply: string | null;
  pendingQuestion?: { toolCallId: string; questions: Question[]; expiresAt: string };
  pendingApprovals?: { toolCallId: string; name: string; arguments: string }[];
  finishReason?: string | null;
  /** The document chunks the answer drew on (retrieval); absent when the turn had none. */
  ragSources?: RagSource[];
  /** The reply parsed and valid against the action's output schema; absent when the action has none. */
  output?: unknown;
  usage: { inputTokens: number; outputTokens: number; estimatedCost: number };
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/**
 * What every front door answers for a turn-running command: the whole outcome once the turn
 * ended or paused (a failed turn too: status `FA` with its `error`, not an error of the command),
 * only where to follow it while it goes on (HTTP's 202). `done` never leaves Parley.
 */
export function turnReplyBody(reply: TurnReply): { accepted: boolean; body: Omit<TurnReply, 'done'> | CommandReply } {
  if (!reply.done)
    return {
      accepted: true,
      body: { conversationId: reply.conversationId, status: reply.status, position: reply.position },
    };
  const { done: _done, ...body } = reply;
  return { accepted: false, body };
}

import type { ToolOutcome } from '@parley/core';
import type { ConversationEvent } from './conversation.events';
import { availableTools, type ConversationState, type TurnToolCall } from './conversation.state';
import type { CompleteRemoteTool, ExpireRemoteTool, RecordRemoteToolInvoked } from './turn.commands';
import type { RunningTurn } from './turn.rules';
import { toolFailed, toolOutcome } from './turn.tools';

/**
 * Remote tools (seed 003's event-driven skills): the call is published, the conversation waits
 * (WA) without a worker, and the completion or the deadline records the call's outcome and
 * resumes the turn. A completion for a call that is not waiting (settled, unknown, or its
 * conversation closed) decides nothing: duplicates are dropped by their correlation id.
 */

export const remoteInvoked = (
  c: RunningTurn,
  call: TurnToolCall,
  command: RecordRemoteToolInvoked,
): ConversationEvent => ({
  type: 'RemoteToolInvoked',
  data: { ...command.data, turnNo: c.turn.no, toolCallId: call.id, name: call.name },
});

/** The call waiting for a remote answer that `match` picks, with its waiting turn; null when none waits. */
function waiting(
  state: ConversationState,
  match: (call: TurnToolCall) => boolean,
): { c: RunningTurn; call: TurnToolCall } | null {
  if (state.status !== 'WA' || !state.turn) return null;
  const call = state.turn.toolCalls.find((t) => t.status === 'invoked' && match(t));
  return call ? { c: { ...state, turn: state.turn }, call } : null;
}

const resumed = (c: RunningTurn): ConversationEvent => ({
  type: 'TurnResumed',
  data: { turnNo: c.turn.no, reason: 'remote_tool' },
});

export function remoteCompleted(state: ConversationState, command: CompleteRemoteTool): ConversationEvent[] {
  const found = waiting(state, (t) => t.remote?.correlationId === command.data.correlationId);
  if (!found) return [];
  const { c, call } = found;
  const durationMs = Math.max(0, Date.parse(command.meta.now) - Date.parse(call.remote?.invokedAt ?? command.meta.now));
  const { result } = command.data;
  const tool = availableTools(c).find((t) => t.name === call.name);
  const outcome: ToolOutcome = result.ok
    ? { ...result, durationMs, returnDirect: tool?.returnDirect ?? false, skipResponse: tool?.skipResponse ?? false }
    : { ...result, durationMs };
  return [...toolOutcome(c, call, outcome), resumed(c)];
}

export function remoteExpired(state: ConversationState, command: ExpireRemoteTool): ConversationEvent[] {
  const now = Date.parse(command.meta.now);
  const found = waiting(state, (t) => t.id === command.data.toolCallId);
  if (!found || Date.parse(found.call.remote?.deadline ?? '') > now) return [];
  const { c, call } = found;
  const durationMs = Math.max(0, now - Date.parse(call.remote?.invokedAt ?? command.meta.now));
  const message = `Remote tool '${call.name}' did not answer by its deadline (${call.remote?.deadline}).`;
  return [toolFailed(c, call, 'TIMEOUT', message, durationMs), resumed(c)];
}

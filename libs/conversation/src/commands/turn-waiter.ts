import { Inject, Injectable } from '@nestjs/common';
import { evolve } from '../domain/conversation.evolve';
import type { ConversationState } from '../domain/conversation.state';
import { ConversationSignals } from '../repository/conversation-signals';
import { ConversationRepository, toEnvelope } from '../repository/conversation.repository';

export interface Waited {
  state: ConversationState;
  position: string;
  /** false: the timeout passed while the turn was still running. */
  done: boolean;
}

const POLL_MS = 100;

/** Events after which a turn may have left RU: the only appends worth waking a waiter for. */
const TURN_BOUNDARIES: ReadonlySet<string> = new Set([
  'ConversationCompleted',
  'ConversationFailed',
  'QuestionAsked',
  'ToolCallApprovalRequested',
  'ConversationPaused',
  'ConversationTerminated',
  'ConversationKilled',
  'ConversationStuck',
]);

/**
 * Waits until a turn ends or pauses (the conversation leaves RU). Wakes on this process's
 * appends and polls the stream for a worker in another process; never blocks a thread.
 */
@Injectable()
export class TurnWaiter {
  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
  ) {}

  async wait(
    conversationId: string,
    from: { state: ConversationState; revision: bigint; position: string },
    timeoutMs: number,
  ): Promise<Waited> {
    const deadline = Date.now() + timeoutMs;
    let { state, revision, position } = from;
    let wake: () => void = () => undefined;
    const off = this.signals.onAppended(conversationId, (types) => {
      if (types.some((t) => TURN_BOUNDARIES.has(t))) wake();
    });
    try {
      for (;;) {
        for (const event of await this.repository.eventsFrom(conversationId, revision + 1n)) {
          state = evolve(state, toEnvelope(event));
          revision = event.revision;
          position = event.position;
        }
        if (state.status !== 'RU') return { state, position, done: true };
        const left = deadline - Date.now();
        if (left <= 0) return { state, position, done: false };
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, POLL_MS));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      off();
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { evolve } from '../domain/conversation.evolve';
import type { ConversationState } from '../domain/conversation.state';
import { type AppendedSignal, ConversationSignals } from '../repository/conversation-signals';
import { type Appended, ConversationRepository, toEnvelope } from '../repository/conversation.repository';

export interface Waited {
  state: ConversationState;
  position: string;
  /** false: the timeout passed while the turn was still running. */
  done: boolean;
}

/** Where the command that started (or resumed) the turn left the conversation. */
export type WaitFrom = Appended;

/**
 * Listens to one conversation from the moment it is created; `until` waits (`readNow`: look at
 * the stream at once, for a state that may be behind it), `close` stops listening.
 */
export interface TurnWatch {
  until(from: WaitFrom, timeoutMs: number, readNow?: boolean): Promise<Waited>;
  close(): void;
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
 * appends, taking the state they folded to, and polls the stream for a worker in another
 * process; never blocks a thread.
 */
@Injectable()
export class TurnWaiter {
  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
  ) {}

  /**
   * Starts listening before the command appends, so a turn that ends in this process is seen
   * through its signal alone; until then only the polls read the stream.
   */
  watch(conversationId: string): TurnWatch {
    let newest: AppendedSignal | null = null;
    let wake: () => void = () => undefined;
    const off = this.signals.onAppended(conversationId, (signal) => {
      if (!signal.types.some((t) => TURN_BOUNDARIES.has(t))) return;
      if (!newest || signal.revision > newest.revision) newest = signal;
      wake();
    });
    const until = async (from: WaitFrom, timeoutMs: number, readNow = false): Promise<Waited> => {
      const deadline = Date.now() + timeoutMs;
      let { state, revision, position } = from;
      for (let polled = readNow; ; polled = true) {
        const boundary = newest as AppendedSignal | null;
        newest = null;
        if (boundary && boundary.revision > revision) ({ state, revision, position } = boundary);
        else if (polled) {
          const before = revision;
          for (const event of await this.repository.eventsFrom(conversationId, revision + 1n)) {
            state = evolve(state, toEnvelope(event));
            revision = event.revision;
            position = event.position;
            // This turn's end, not a later turn's: the stream may have moved on since.
            if (state.status !== 'RU') break;
          }
          // What a worker elsewhere wrote, folded: the next command here starts from it.
          if (revision > before) this.repository.remember(conversationId, { state, revision });
        }
        if (state.status !== 'RU') return { state, position, done: true };
        const left = deadline - Date.now();
        if (left <= 0) return { state, position, done: false };
        if (newest) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, POLL_MS));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = () => undefined;
      }
    };
    return { until, close: off };
  }
}

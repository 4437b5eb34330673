import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { unavailableError } from '@parley/platform';
import { evolve } from '@parley/domain';
import type { ConversationState } from '@parley/domain';
import { endsTurn } from '@parley/domain';
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

/**
 * Waits until a turn ends or pauses (the conversation leaves RU). Wakes on this process's
 * appends, taking the state they folded to; for a turn a worker in another process runs, reads
 * the stream when that worker announces the turn (ConversationSignals), and every
 * `turn.waitPollMs` whatever comes. While the turn runs in this process, its appends and its
 * run's end wake the waiter, and it does not poll (at 50 turns at once, the polls read each
 * turn's stream about once more). Never blocks a thread.
 */
@Injectable()
export class TurnWaiter {
  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Starts listening before the command appends, so a turn that ends in this process is seen
   * through its signal alone; until then only the polls read the stream.
   */
  watch(conversationId: string): TurnWatch {
    let newest: AppendedSignal | null = null;
    /** Another process announced a turn of this conversation: read the stream now. */
    let announced = false;
    let wake: () => void = () => undefined;
    const off = this.signals.onAppended(conversationId, (signal) => {
      // Only an event that takes the conversation out of RU is worth waking a waiter for.
      if (!signal.types.some(endsTurn)) return;
      if (!newest || signal.revision > newest.revision) newest = signal;
      wake();
    });
    const offAnnounced = this.signals.onAnnounced(conversationId, () => {
      announced = true;
      wake();
    });
    // A run here that returned or failed: read the stream, in case the turn goes on elsewhere.
    const offRan = this.signals.onRanHere(conversationId, () => {
      announced = true;
      wake();
    });
    const pollMs = this.config.turn.waitPollMs;
    const until = async (from: WaitFrom, timeoutMs: number, readNow = false): Promise<Waited> => {
      const deadline = Date.now() + timeoutMs;
      let { state, revision, position } = from;
      for (let polled = readNow; ; polled = true) {
        const boundary = newest as AppendedSignal | null;
        newest = null;
        const read = polled || announced;
        announced = false;
        if (boundary && boundary.revision > revision) ({ state, revision, position } = boundary);
        else if (read) {
          const before = revision;
          // The command is recorded: an outage while it waits is no failure of it. The next poll
          // reads again, and at the deadline the caller hears the turn goes on (202).
          const events = await this.repository.eventsFrom(conversationId, revision + 1n).catch((err: unknown) => {
            if (unavailableError(err)) return [];
            throw err;
          });
          for (const event of events) {
            const envelope = toEnvelope(event);
            if (envelope) state = evolve(state, envelope);
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
        if (newest || announced) continue;
        // A turn running here wakes this waiter by its appends and by its end: no poll meanwhile.
        const waitMs = this.signals.isRunningHere(conversationId) ? left : Math.min(left, pollMs);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = () => undefined;
      }
    };
    return {
      until,
      close: () => {
        off();
        offAnnounced();
        offRan();
      },
    };
  }
}

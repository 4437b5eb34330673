import {
  type Appended,
  type ConversationEvent,
  type ConversationRepository,
  type ConversationState,
  type ExistingConversation,
} from '@parley/conversation';
import { WrongExpectedVersion } from '@parley/event-store';

/** Thrown when another writer (a kill, a pause, a racing worker) changed the stream under the turn. */
export class TurnPreempted extends Error {
  constructor(readonly state: ConversationState) {
    super('The conversation changed under the running turn.');
    this.name = 'TurnPreempted';
  }
}

/**
 * The turn's view of its conversation: the folded state and its revision, appended to with the
 * expected revision so two workers can never both write. Appends are serialized, and once one
 * finds the stream moved, every later one is refused too.
 */
export class TurnContext {
  private tail: Promise<unknown> = Promise.resolve();
  private preempted: TurnPreempted | null = null;

  constructor(
    readonly conversationId: string,
    private readonly repository: ConversationRepository,
    private loaded: { state: ConversationState; revision: bigint | null },
    private readonly correlationId: string,
  ) {}

  get state(): ExistingConversation {
    return this.loaded.state as ExistingConversation;
  }

  get revision(): bigint | null {
    return this.loaded.revision;
  }

  append(events: ConversationEvent[]): Promise<Appended> {
    const next = this.tail.then(() => this.appendNow(events));
    this.tail = next.catch(() => undefined);
    return next;
  }

  private async appendNow(events: ConversationEvent[]): Promise<Appended> {
    // Appends queued behind the one that found the stream moved must not land on the new state.
    if (this.preempted) throw this.preempted;
    try {
      const appended = await this.repository.append(this.conversationId, this.loaded, events, {
        actor: 'worker',
        correlationId: this.correlationId,
      });
      this.loaded = appended;
      return appended;
    } catch (err) {
      if (err instanceof WrongExpectedVersion) {
        this.loaded = await this.repository.load(this.conversationId);
        this.preempted = new TurnPreempted(this.loaded.state);
        throw this.preempted;
      }
      throw err;
    }
  }
}

import { type Appended, type ConversationRepository } from '@parley/conversation';
import { withStorableText } from '@parley/core';
import {
  decide,
  type SystemCommand,
  type Unstamped,
  type ConversationEnvelope,
  type ConversationEvent,
  type ConversationState,
  type ExistingConversation,
  fold,
} from '@parley/domain';
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
  /** Events folded into `state` but not stored yet: they go with the next append. */
  private staged: ConversationEvent[] = [];
  private view: ConversationState;

  constructor(
    readonly conversationId: string,
    private readonly repository: ConversationRepository,
    private loaded: { state: ConversationState; revision: bigint | null },
    private readonly correlationId: string,
  ) {
    this.view = loaded.state;
  }

  /** The conversation as the turn sees it: the stored state and the staged events. */
  get state(): ExistingConversation {
    return this.view as ExistingConversation;
  }

  /** The revision of the stored state (staged events are not in the stream yet). */
  get revision(): bigint | null {
    return this.loaded.revision;
  }

  /**
   * The decider's events for what the turn just did, on the state as the turn sees it now. What
   * a model or tool sent is text no store can hold when it has NUL or unpaired surrogates: they
   * become U+FFFD here, or every append of the turn would fail the same way.
   */
  decide(command: Unstamped<SystemCommand>): ConversationEvent[] {
    const stamped = { ...withStorableText(command), meta: { now: new Date().toISOString(), actor: 'worker' } };
    return decide(stamped as SystemCommand, this.view);
  }

  /**
   * Fails the turn on its stored state, dropping what was staged: for what the store refused in a
   * way no retry changes (an event over the size limit).
   */
  abandon(command: Unstamped<Extract<SystemCommand, { type: 'AbandonTurn' }>>): Promise<Appended> {
    this.staged = [];
    this.view = this.loaded.state;
    return this.append(this.decide(command));
  }

  append(events: ConversationEvent[]): Promise<Appended> {
    const next = this.tail.then(() => this.appendNow(events));
    this.tail = next.catch(() => undefined);
    return next;
  }

  /**
   * Folds `events` into the turn's state now and stores them with the next append: for what may
   * be lost in a crash because it is simply done again (an idempotent tool's call and result).
   * A turn that stops without another append (killed, preempted) drops them.
   */
  stage(events: ConversationEvent[]): void {
    this.view = this.foldStaged(this.view, events);
    this.staged.push(...events);
  }

  /** Folds events not stored yet into `state`, with the metadata their append will give them. */
  private foldStaged(state: ConversationState, events: readonly ConversationEvent[]): ConversationState {
    const metadata = { actor: 'worker', correlationId: this.correlationId, occurredAt: new Date().toISOString() };
    return fold(
      events.map((event) => ({ ...event, metadata }) as ConversationEnvelope),
      state,
    );
  }

  private async appendNow(events: ConversationEvent[]): Promise<Appended> {
    // Appends queued behind the one that found the stream moved must not land on the new state.
    if (this.preempted) throw this.preempted;
    const staged = this.staged;
    this.staged = [];
    try {
      const appended = await this.repository.append(this.conversationId, this.loaded, [...staged, ...events], {
        actor: 'worker',
        correlationId: this.correlationId,
      });
      this.loaded = appended;
      this.view = this.foldStaged(appended.state, this.staged);
      return appended;
    } catch (err) {
      if (err instanceof WrongExpectedVersion) {
        this.loaded = await this.repository.load(this.conversationId);
        this.view = this.loaded.state;
        this.staged = [];
        this.preempted = new TurnPreempted(this.loaded.state);
        throw this.preempted;
      }
      this.staged = [...staged, ...this.staged];
      throw err;
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, type EventStore, type RecordedEvent, StreamNotFound } from '@parley/event-store';
import { v7 as uuidv7 } from 'uuid';
import { type ConversationEvent, streamIdOf } from '../domain/conversation.events';
import { evolve } from '../domain/conversation.evolve';
import { type ConversationState, initialState } from '../domain/conversation.state';
import type { ConversationEnvelope, EventMeta } from '../domain/event-envelope';
import { ConversationSignals } from './conversation-signals';

/** A folded conversation and the revision it was folded at (null: no stream yet). */
export interface LoadedConversation {
  state: ConversationState;
  revision: bigint | null;
}

export interface Appended {
  state: ConversationState;
  revision: bigint;
  position: string;
}

export function toEnvelope(event: RecordedEvent): ConversationEnvelope {
  return { type: event.type, data: event.data, metadata: event.metadata } as unknown as ConversationEnvelope;
}

/** Loads conversations by folding their stream, and appends with the expected revision. */
@Injectable()
export class ConversationRepository {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
  ) {}

  async load(conversationId: string): Promise<LoadedConversation> {
    let events: RecordedEvent[];
    try {
      events = await this.store.readStream(streamIdOf(conversationId));
    } catch (err) {
      if (err instanceof StreamNotFound) return { state: initialState(), revision: null };
      throw err;
    }
    let state = initialState();
    for (const e of events) state = evolve(state, toEnvelope(e));
    return { state, revision: events.length ? events[events.length - 1].revision : null };
  }

  /** Reads the raw events of a conversation from a revision on (the waiter and auditors use it). */
  async eventsFrom(conversationId: string, fromRevision: bigint): Promise<RecordedEvent[]> {
    try {
      return await this.store.readStream(streamIdOf(conversationId), { fromRevision });
    } catch (err) {
      if (err instanceof StreamNotFound) return [];
      throw err;
    }
  }

  /** The position of the stream's newest event. */
  async headPosition(conversationId: string): Promise<string> {
    const [last] = await this.store.readStream(streamIdOf(conversationId), { direction: 'backwards', maxCount: 1 });
    return last.position;
  }

  /** The current revision of a conversation's stream, without folding it. */
  async currentRevision(conversationId: string): Promise<bigint | null> {
    try {
      const [last] = await this.store.readStream(streamIdOf(conversationId), { direction: 'backwards', maxCount: 1 });
      return last?.revision ?? null;
    } catch (err) {
      if (err instanceof StreamNotFound) return null;
      throw err;
    }
  }

  /**
   * Appends `events` on top of `loaded` (expected revision = the loaded one) and returns the
   * evolved state. Throws WrongExpectedVersion when someone else wrote first.
   */
  async append(
    conversationId: string,
    loaded: LoadedConversation,
    events: ConversationEvent[],
    meta: Omit<EventMeta, 'occurredAt'> & { occurredAt?: string },
  ): Promise<Appended> {
    const occurredAt = meta.occurredAt ?? new Date().toISOString();
    const envelopes: ConversationEnvelope[] = events.map(
      (e) => ({ ...e, metadata: stripUndefined({ ...meta, occurredAt }) }) as ConversationEnvelope,
    );
    const result = await this.store.append(
      streamIdOf(conversationId),
      envelopes.map((e) => ({
        eventId: uuidv7(),
        type: e.type,
        schemaVersion: 1,
        data: e.data,
        metadata: { ...e.metadata },
      })),
      { expected: loaded.revision === null ? 'no_stream' : loaded.revision },
    );
    let state = loaded.state;
    for (const e of envelopes) state = evolve(state, e);
    this.signals.appended(
      conversationId,
      events.map((e) => e.type),
    );
    return { state, revision: result.nextRevision, position: result.position };
  }
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

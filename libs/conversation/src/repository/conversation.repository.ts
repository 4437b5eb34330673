import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { stripUndefined } from '@parley/core';
import { EVENT_STORE, type EventStore, type RecordedEvent, StreamNotFound } from '@parley/event-store';
import { LRUCache } from 'lru-cache';
import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import { type ConversationEvent, streamIdOf } from '@parley/domain';
import { evolve } from '@parley/domain';
import { type ConversationState, initialState } from '@parley/domain';
import type { ConversationEnvelope, EventMeta } from '@parley/domain';
import { CONVERSATION_EVENT_SCHEMAS, knowsType, upcast, type EventSchemas, type StoredEvent } from '@parley/domain';
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

const logger = new Logger('ConversationEvents');
/** The event types this process has said it skips: each is logged once. */
const skipped = new Set<string>();

/**
 * A stored conversation event as the domain reads it, upcast to the current version of its type:
 * every reader that folds or projects stored events takes them through here. Null when this
 * Parley does not know the type, or that version of it — a newer Parley wrote it, as during a
 * rolling deploy: such an event is neither folded nor projected, and the first of each type
 * this process meets is logged.
 */
export function toEnvelope(
  event: StoredEvent,
  schemas: EventSchemas = CONVERSATION_EVENT_SCHEMAS,
): ConversationEnvelope | null {
  const envelope = upcast(event, schemas);
  if (envelope === null && !skipped.has(event.type)) {
    skipped.add(event.type);
    const what = knowsType(schemas, event.type)
      ? `version ${event.schemaVersion} of ${event.type} (this Parley reads up to version ${schemas.current[event.type]})`
      : `event type ${event.type}`;
    logger.warn(`Skipping ${what}: a newer Parley wrote it, so it is neither folded nor projected here.`);
  }
  return envelope;
}

/**
 * Injection token of the event schemas a repository reads and writes with; unset, it uses
 * CONVERSATION_EVENT_SCHEMAS (tests give it schemas that have moved on).
 */
export const EVENT_SCHEMAS = Symbol('parley.conversation-event-schemas');

type Folded = LoadedConversation & { revision: bigint };

/** At most this many states are kept, however small. */
const MAX_KEPT = 50_000;

/** Made-up ids remembered at most, and for how long (a command runs its first append within it). */
const MAX_MADE_UP = 10_000;
const MADE_UP_TTL_MS = 60_000;

const snapshotChars = new WeakMap<object, number>();

/**
 * Roughly what a folded state holds in memory, for the cache's byte budget: its texts at two
 * bytes a character (the snapshot measured once, as states share it) plus a fixed part per
 * message and per state. Cheap enough to run on every append.
 */
export function approximateBytes(state: ConversationState): number {
  if (state.status === 'none') return 64;
  let chars = snapshotChars.get(state.snapshot);
  if (chars === undefined) {
    chars = JSON.stringify(state.snapshot).length;
    snapshotChars.set(state.snapshot, chars);
  }
  for (const m of state.transcript) {
    chars += 64 + (m.content?.length ?? 0);
    for (const call of m.toolCalls ?? []) chars += 64 + call.arguments.length;
  }
  chars += 64 * Object.keys(state.commands).length + (state.turn?.lastReply?.length ?? 0);
  chars += state.memory?.summary?.text.length ?? 0;
  return 2 * chars + 1024;
}

/**
 * Loads conversations by folding their stream, and appends with the expected revision.
 *
 * Folded states are kept (least recently used out first, within CONVERSATION_CACHE_MB), so a
 * load reads only the events after the kept revision — usually none — instead of the whole
 * stream. The store stays the authority: every load still asks it for newer events, and every
 * append still carries the expected revision, so a state kept here is never acted on stale.
 * States are immutable (`evolve` returns new objects), which is what makes sharing them safe.
 */
@Injectable()
export class ConversationRepository {
  private readonly folded: LRUCache<string, Folded> | null;
  /** Ids this process has just made up for new conversations (`madeUp`), until their first append. */
  private readonly madeUpIds = new LRUCache<string, true>({ max: MAX_MADE_UP, ttl: MADE_UP_TTL_MS });

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
    @Inject(CONFIG) config: Config,
    @Optional() @Inject(EVENT_SCHEMAS) private readonly schemas: EventSchemas = CONVERSATION_EVENT_SCHEMAS,
  ) {
    const megabytes = config.eventStore.conversationCacheMb;
    this.folded =
      megabytes > 0
        ? new LRUCache<string, Folded>({
            max: MAX_KEPT,
            maxSize: megabytes * 1024 * 1024,
            sizeCalculation: (folded) => approximateBytes(folded.state),
          })
        : null;
  }

  /**
   * The state this process folded last, without asking the store, when it holds one at
   * `atLeast` or later; otherwise `load`. For writers only: what they decide on it is appended
   * with its revision, so a state someone else has moved past fails the append
   * (WrongExpectedVersion) instead of being acted on. `fresh` says whether the store was asked.
   */
  async loadForWrite(conversationId: string, atLeast?: bigint): Promise<LoadedConversation & { fresh: boolean }> {
    const kept = this.folded?.get(conversationId);
    if (kept && (atLeast === undefined || kept.revision >= atLeast)) return { ...kept, fresh: false };
    if (!kept && atLeast === undefined && this.madeUpIds.has(conversationId))
      return { state: initialState(), revision: null, fresh: false };
    return { ...(await this.load(conversationId)), fresh: true };
  }

  async load(conversationId: string): Promise<LoadedConversation> {
    const kept = this.folded?.get(conversationId);
    let events: RecordedEvent[];
    try {
      events = await this.store.readStream(
        streamIdOf(conversationId),
        kept ? { fromRevision: kept.revision + 1n } : undefined,
      );
    } catch (err) {
      this.folded?.delete(conversationId);
      if (err instanceof StreamNotFound) return { state: initialState(), revision: null };
      throw err;
    }
    let state = kept?.state ?? initialState();
    for (const e of events) state = this.evolveStored(state, e);
    const revision = events.at(-1)?.revision ?? kept?.revision ?? null;
    // Nothing new: the kept entry already holds this state (and `get` refreshed its recency).
    if (revision !== null && events.length > 0) this.remember(conversationId, { state, revision });
    return { state, revision };
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

  /**
   * The conversation as the command with idempotency key `commandId` left it: folded up to the
   * last event that command appended (a replay answers from there, as the first run did).
   * Falls back to the newest state when no event carries the key any more.
   */
  async atCommand(conversationId: string, commandId: string): Promise<Appended> {
    let state = initialState();
    let at: Appended | null = null;
    let last: Appended | null = null;
    for (const event of await this.store.readStream(streamIdOf(conversationId))) {
      state = this.evolveStored(state, event);
      last = { state, revision: event.revision, position: event.position };
      if (event.metadata.commandId === commandId) at = last;
    }
    if (!last) throw new StreamNotFound(streamIdOf(conversationId));
    return at ?? last;
  }

  /** The state and position at the end of the stream (a command that recorded nothing answers with it). */
  async atHead(conversationId: string): Promise<Appended> {
    const { state } = await this.load(conversationId);
    const [last] = await this.store.readStream(streamIdOf(conversationId), { direction: 'backwards', maxCount: 1 });
    return { state, revision: last.revision, position: last.position };
  }

  /**
   * Says that this process has just made `conversationId` up (a new UUIDv7): until its first
   * append, `loadForWrite` answers that no such stream exists without asking the store. Were it
   * wrong, the append expecting no stream would fail and the command retry on a fresh load.
   */
  madeUp(conversationId: string): void {
    this.madeUpIds.set(conversationId, true);
  }

  /**
   * The id of a conversation a command is about to start: with the caller's idempotency key,
   * derived from it in `namespace` (a UUIDv5, so a retry finds the same conversation); without,
   * a new UUIDv7 that this process knows has no stream yet (`madeUp`).
   */
  idForNew(namespace: string, subject: string, idempotencyKey: string | undefined): string {
    if (idempotencyKey) return uuidv5(`${subject}:${idempotencyKey}`, namespace);
    const id = uuidv7();
    this.madeUp(id);
    return id;
  }

  /** Drops the state kept for a conversation (an erased one's content must not stay in memory). */
  forget(conversationId: string): void {
    this.folded?.delete(conversationId);
  }

  /** The current revision of each conversation's stream, without folding any (missing: no stream). */
  async currentRevisions(conversationIds: readonly string[]): Promise<Map<string, bigint>> {
    const byStream = await this.store.streamRevisions(conversationIds.map(streamIdOf));
    return new Map(
      conversationIds.flatMap((id) => {
        const revision = byStream.get(streamIdOf(id));
        return revision === undefined ? [] : [[id, revision] as const];
      }),
    );
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
        schemaVersion: this.schemas.current[e.type],
        data: e.data,
        metadata: { ...e.metadata },
      })),
      { expected: loaded.revision === null ? 'no_stream' : loaded.revision },
    );
    this.madeUpIds.delete(conversationId);
    let state = loaded.state;
    for (const e of envelopes) state = evolve(state, e);
    const appended = { state, revision: result.nextRevision, position: result.position };
    this.remember(conversationId, appended);
    this.signals.appended(conversationId, { types: events.map((e) => e.type), ...appended });
    return appended;
  }

  /** Folds a stored event, upcast; one this Parley does not know leaves the state as it is. */
  private evolveStored(state: ConversationState, event: RecordedEvent): ConversationState {
    const envelope = toEnvelope(event, this.schemas);
    return envelope ? evolve(state, envelope) : state;
  }

  /**
   * Keeps a state folded from this stream's events at `revision` (by a load, an append, or a
   * reader such as the turn waiter), unless a newer one is kept already.
   */
  remember(conversationId: string, folded: Folded): void {
    if (!this.folded) return;
    const current = this.folded.peek(conversationId);
    if (current && current.revision > folded.revision) return;
    this.folded.set(conversationId, { state: folded.state, revision: folded.revision });
  }
}

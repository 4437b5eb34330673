import type {
  AppendOptions,
  AppendResult,
  EventFilter,
  EventStore,
  EventToAppend,
  FeedPage,
  ReadPageOptions,
  GlobalFeed,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  SubscriptionItem,
} from '../event-store.port';
import { ForwardingEventStore } from '../forwarding-event-store';
import { categoryOf } from '../prepare-events';
import { ERASED, openDeep, openToken, sealValue } from './content-cipher';
import { mapContent } from './content-fields';
import type { KeyObject } from 'node:crypto';
import { isKeyTaken, type ConversationKeys, type KeyState } from './conversation-keys';

const CONVERSATION = 'conversation';
const conversationIdOf = (streamId: string) => streamId.slice(CONVERSATION.length + 1);
const isConversation = (streamId: string) => categoryOf(streamId) === CONVERSATION;

/**
 * Seals the content of conversation events (content-fields.ts) with the conversation's data key
 * before they are stored, and opens it on every read: the hash chain is over what is stored, so
 * `verify` checks the sealed form and keeps working after an erasure. Once a conversation is
 * erased its content reads as `[erased]`, and content appended after (a turn that was still
 * running) is stored as `[erased]`. Events of conversations without a key (stored before content
 * sealing, or with CONTENT_ENCRYPTION=false) pass through as they are.
 *
 * `raw` is the store underneath: the projections read it, so the read models hold content sealed
 * and the queries open it (docs/security.md, "Erasure").
 */
export class SealingEventStore extends ForwardingEventStore {
  /**
   * Whether a conversation's first append makes it a key (CONTENT_ENCRYPTION). Conversations
   * that have one are sealed whatever it says; the benchmark turns it off and on between runs.
   */
  encrypt: boolean;
  /** Milliseconds spent sealing and opening content in this process (the benchmark reads it). */
  readonly spent = { ms: 0 };

  constructor(
    raw: EventStore,
    readonly keys: ConversationKeys,
    options: { encrypt: boolean },
  ) {
    super(raw);
    this.encrypt = options.encrypt;
  }

  /** The store underneath, whose events are sealed (the projections read it). */
  get raw(): EventStore {
    return this.inner;
  }

  override async append(streamId: string, events: EventToAppend[], options?: AppendOptions): Promise<AppendResult> {
    if (!isConversation(streamId) || !Array.isArray(events)) return this.raw.append(streamId, events, options);
    const conversationId = conversationIdOf(streamId);
    const started = events.find((e) => e?.type === 'ConversationStarted')?.data as { owner?: unknown } | undefined;
    const owner = typeof started?.owner === 'string' ? started.owner : null;
    // A new conversation's key is stored by its first append's own statement: one round trip.
    const made =
      started && options?.expected === 'no_stream' && this.encrypt && this.raw.writesAlongside
        ? this.keys.make(conversationId, owner)
        : null;
    if (made) {
      try {
        const result = await this.raw.append(streamId, this.sealed(events, conversationId, made.key), {
          ...options,
          alongside: made.insert,
        });
        made.keep();
        return result;
      } catch (err) {
        // The conversation has a row already (an erasure before its start, a key made apart): it is read.
        if (!isKeyTaken(err)) throw err;
      }
    }
    const state = await this.keys.stateOf(conversationId, this.encrypt, owner);
    if (state.kind === 'none') return this.raw.append(streamId, events, options);
    const key = state.kind === 'key' ? state.key : null;
    return this.raw.append(streamId, this.sealed(events, conversationId, key), options);
  }

  /** The events with their content sealed with the conversation's key; with none (erased), `[erased]`. */
  private sealed(events: EventToAppend[], conversationId: string, key: KeyObject | null): EventToAppend[] {
    // An empty text (no reasoning in a chunk) says nothing: it stays as it is.
    const seal = key
      ? (value: unknown) => (value === '' ? value : sealValue(key, conversationId, value))
      : () => ERASED;
    return this.timed(() =>
      events.map((e) =>
        e && typeof e === 'object' && typeof e.type === 'string' ? { ...e, data: mapContent(e.type, e.data, seal) } : e,
      ),
    );
  }

  override async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await this.raw.readStream(streamId, options);
    if (!isConversation(streamId) || events.length === 0) return events;
    const id = conversationIdOf(streamId);
    const state = await this.keys.stateOf(id);
    if (state.kind === 'none' && this.timed(() => events.some(isSealed))) {
      this.keys.forget(id);
      const fresh = await this.keys.stateOf(id);
      return this.timed(() => events.map((e) => openEvent(e, fresh)));
    }
    return this.timed(() => events.map((e) => openEvent(e, state)));
  }

  override async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.openMany(await this.raw.readAll(options));
  }

  override async readPage(
    after: string | null,
    filter: EventFilter | undefined,
    maxCount: number,
    options?: ReadPageOptions,
  ): Promise<FeedPage> {
    const page = await this.raw.readPage(after, filter, maxCount, options);
    return { ...page, events: await this.openMany(page.events) };
  }

  override subscribeToAll(options?: SubscribeOptions): AsyncIterable<SubscriptionItem> {
    const inner = this.raw.subscribeToAll(options);
    const keys = this.keys;
    const timed = <T>(fn: () => T) => this.timed(fn);
    return {
      async *[Symbol.asyncIterator]() {
        for await (const item of inner) {
          if (item.kind !== 'event' || !isConversation(item.event.streamId)) yield item;
          else {
            const id = conversationIdOf(item.event.streamId);
            let state = await keys.stateOf(id);
            if (state.kind === 'none' && isSealed(item.event)) {
              keys.forget(id);
              state = await keys.stateOf(id);
            }
            const opened = state;
            yield { kind: 'event', event: timed(() => openEvent(item.event, opened)) };
          }
        }
      },
    };
  }

  private async openMany(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const ids = events.filter((e) => isConversation(e.streamId)).map((e) => conversationIdOf(e.streamId));
    if (ids.length === 0) return events;
    let states = await this.keys.statesOf(ids);
    const stale = events.filter(
      (e) => isConversation(e.streamId) && states.get(conversationIdOf(e.streamId))?.kind === 'none' && isSealed(e),
    );
    if (stale.length > 0) {
      for (const e of stale) this.keys.forget(conversationIdOf(e.streamId));
      states = await this.keys.statesOf(ids);
    }
    const opened = states;
    return this.timed(() =>
      events.map((e) =>
        isConversation(e.streamId) ? openEvent(e, opened.get(conversationIdOf(e.streamId)) ?? { kind: 'none' }) : e,
      ),
    );
  }

  private timed<T>(fn: () => T): T {
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.spent.ms += performance.now() - started;
    }
  }
}

/** A conversation's content opened with its key state: plaintext, `[erased]`, or (no key) as stored. */
export function openContent(conversationId: string, value: unknown, state: KeyState): unknown {
  if (state.kind === 'none') return value;
  if (state.kind === 'erased') return openDeep(value, () => ERASED);
  return openDeep(value, (token) => openToken(state.key, conversationId, token));
}

/** Whether an event's content holds sealed values (so its conversation has a key, whatever the cache says). */
function isSealed(event: RecordedEvent): boolean {
  let sealed = false;
  mapContent(event.type, event.data, (value) => {
    if (typeof value === 'string' && value.startsWith('pc1')) sealed = true;
    return value;
  });
  return sealed;
}

function openEvent(event: RecordedEvent, state: KeyState): RecordedEvent {
  if (state.kind === 'none') return event;
  const conversationId = conversationIdOf(event.streamId);
  // Only the content fields hold sealed values: the rest (a start's snapshot) is not walked.
  // An erased conversation's content reads as erased even where it was stored in plaintext.
  const data =
    state.kind === 'erased'
      ? mapContent(event.type, event.data, () => ERASED)
      : mapContent(event.type, event.data, (value) =>
          typeof value === 'string' && !value.startsWith('pc1')
            ? value
            : openDeep(value, (token) => openToken(state.key, conversationId, token)),
        );
  return data === event.data ? event : { ...event, data };
}

/** The store under a SealingEventStore (what projections read: content stays sealed), else the store itself. */
export function rawStoreOf(store: EventStore): EventStore;
export function rawStoreOf(store: GlobalFeed): GlobalFeed;
export function rawStoreOf(store: GlobalFeed): GlobalFeed {
  return store instanceof SealingEventStore ? store.raw : store;
}

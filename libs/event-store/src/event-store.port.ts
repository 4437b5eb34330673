/**
 * The event-store port (docs/event-store.md). Both adapters (PostgreSQL, KurrentDB)
 * implement it and pass the same contract suite.
 */

/** What a caller asks to append. `eventId` is the idempotency key (uuid, v7 preferred). */
export interface EventToAppend {
  eventId: string;
  type: string;
  schemaVersion?: number;
  data: unknown;
  metadata?: Record<string, unknown>;
}

/** A stored event as every reader sees it. */
export interface RecordedEvent {
  streamId: string;
  category: string;
  revision: bigint;
  /** Opaque: `pg:<xid8>:<global_position>` or `esdb:<commit>:<prepare>`. Compare with `comparePositions`. */
  position: string;
  eventId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** Tamper evidence: sha-256 over prevHash and the canonical event. */
  prevHash: string;
  hash: string;
}

export type ExpectedState = 'any' | 'no_stream' | 'stream_exists' | bigint;

/** A statement for an append to run in its own transaction (AppendOptions.alongside). */
export interface AlongsideStatement {
  /** Names the combined prepared statement: the same name, the same text. */
  name: string;
  /** SQL with its own $1…$n placeholders. */
  text: string;
  values: unknown[];
}

export interface AppendOptions {
  expected?: ExpectedState;
  /**
   * A write that must commit with the append or not at all (a new conversation's data key): run
   * in the append's own statement, so that an error in it fails the append, which then writes
   * nothing. Only an adapter whose `writesAlongside` is true takes it; the caller makes the write
   * first otherwise.
   */
  alongside?: AlongsideStatement;
}

export interface AppendResult {
  /** The revision of the last event now in the stream. */
  nextRevision: bigint;
  /** The position of the last event appended (or already present, for an idempotent retry). */
  position: string;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface EventFilter {
  /** Stream categories: the part of the stream id before the first '-'. */
  categories?: string[];
  eventTypes?: string[];
}

export interface ReadAllOptions {
  /** Exclusive. Omitted: from the beginning. */
  fromPosition?: string;
  maxCount?: number;
  filter?: EventFilter;
}

export interface StreamMetadata {
  maxCount?: number;
  /** Seconds. */
  maxAgeSeconds?: number;
  truncateBefore?: bigint;
  custom?: Record<string, unknown>;
}

export type SubscriptionItem = { kind: 'event'; event: RecordedEvent } | { kind: 'caughtUp'; position: string | null };

export interface SubscribeOptions {
  /** Exclusive resume point. Omitted: from the beginning. */
  fromPosition?: string;
  filter?: EventFilter;
  /** Stops the iterator. */
  signal?: AbortSignal;
}

export interface VerifyResult {
  ok: boolean;
  /** Events checked. */
  checked: number;
  /** The first revision whose hash does not match, when not ok. */
  firstBadRevision?: bigint;
  reason?: string;
}

/** One page of the global feed, read by the ordering rule. */
export interface FeedPage {
  events: RecordedEvent[];
  /**
   * How far the read looked: every event at or before this position that matches the filter
   * is in this page or an earlier one. Ahead of the last event when the page was short and the
   * feed held later events that did not match; null on an empty store.
   */
  scannedTo: string | null;
}

/**
 * What catch-up subscriptions and subscription runners read: paged reads of the global feed and
 * a way to sleep until something may have changed. Part of every EventStore.
 */
/** How a page of the feed is read. */
export interface ReadPageOptions {
  /**
   * The reader knows of an append of its process that the last read did not show: read past the
   * transactions of other databases on the server at once (PostgreSQL; see readPageSql), rather
   * than once the horizon has stood still.
   */
  appendAwaited?: boolean;
}

export interface GlobalFeed {
  readPage(
    after: string | null,
    filter: EventFilter | undefined,
    maxCount: number,
    options?: ReadPageOptions,
  ): Promise<FeedPage>;
  /**
   * How many appends this process has made (or been told of by its other threads): a reader
   * takes the mark before it reads, and hands it to `waitForAppend`.
   */
  appendMark(): number;
  /**
   * Resolves after an append by this process, after `timeoutMs`, or on abort; never rejects.
   * With `mark`, at once when an append came after it (one made while the reader was reading).
   */
  waitForAppend(timeoutMs: number, signal?: AbortSignal, mark?: number): Promise<void>;
}

export interface EventStore extends GlobalFeed {
  append(streamId: string, events: EventToAppend[], options?: AppendOptions): Promise<AppendResult>;
  /** Whether `append` takes AppendOptions.alongside (the PostgreSQL adapter, whose database holds the keys). */
  readonly writesAlongside: boolean;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up: history, then a `caughtUp` item, then live events. */
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<SubscriptionItem>;
  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void>;
  getStreamMetadata(streamId: string): Promise<StreamMetadata | null>;
  deleteStream(streamId: string): Promise<void>;
  tombstoneStream(streamId: string): Promise<void>;
  verifyStream(streamId: string): Promise<VerifyResult>;
  /** The position of the newest event, or null when the store is empty. */
  headPosition(): Promise<string | null>;
  /**
   * The newest revision of each of `streamIds` that exists (deleted and unknown streams are
   * left out): one question for many streams, for watchers that poll.
   */
  streamRevisions(streamIds: readonly string[]): Promise<Map<string, bigint>>;
  close(): Promise<void>;
}

/** Injection token for the configured EventStore adapter. */
export const EVENT_STORE = Symbol('parley.event-store');

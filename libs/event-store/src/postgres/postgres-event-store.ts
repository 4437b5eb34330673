import type { ClientBase, Pool } from 'pg';
import { DomainError } from '@parley/core';
import { StreamDeleted, StreamNotFound } from '../errors';
import type {
  AppendOptions,
  AppendResult,
  EventFilter,
  EventStore,
  EventToAppend,
  FeedPage,
  ReadAllOptions,
  ReadPageOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeOptions,
  SubscriptionItem,
  VerifyResult,
} from '../event-store.port';
import { ChainVerifier, type ChainOptions } from '../hash-chain';
import { parsePosition, pgPosition } from '../position';
import { prepareEvents } from '../prepare-events';
import { AppendNotifier } from '../subscription/append-notifier';
import { catchUp } from '../subscription/catch-up';
import { toRecordedEvent, type EventRow } from './event-row';
import { runAppend } from './postgres-append';
import {
  HEAD_POSITION_SQL,
  STREAM_REVISIONS_SQL,
  READ_CHAIN_SQL,
  READ_STREAM_BACKWARDS_SQL,
  READ_STREAM_FORWARDS_SQL,
  readPageSql,
  type FilterKind,
} from './postgres-sql';
import { StreamAdmin } from './stream-admin';

export interface PostgresEventStoreOptions {
  /** Largest data + metadata of one event, in bytes of JSON. */
  maxEventBytes: number;
  /** How often live subscriptions look for appends made by other processes. */
  pollMs: number;
  /** Events per page when subscriptions catch up. */
  pageSize?: number;
  /** EVENT_CHAIN_KEY: appends chain HMAC-SHA256 hashes and verify checks them (see ChainOptions). */
  chain?: ChainOptions;
  /**
   * Told once per transaction that has held the feed's horizon for `heldWarnMs` (default
   * HELD_WARN_MS): a transaction of this database left open stops every reader of the feed.
   */
  onHeld?: (hold: FeedHold) => void;
  heldWarnMs?: number;
}

/** A transaction of this database that holds the feed's horizon, as pg_stat_activity shows it. */
export interface FeedHold {
  /** Its transaction id (xid8). */
  xid: string;
  /** How long the feed's reads have found it holding the horizon. */
  heldMs: number;
  /** Its backend, while it has one (a prepared transaction has none: `prepared` names it). */
  pid: number | null;
  applicationName: string | null;
  state: string | null;
  transactionStart: Date | null;
  /** The start of its last statement's text. */
  query: string | null;
  /** The global id of a prepared (two-phase) transaction. */
  prepared: string | null;
}

/** How long a transaction holds the feed before `onHeld` is told of it, by default. */
export const HELD_WARN_MS = 10_000;

/**
 * How long the feed's horizon (the snapshot's xmin) must stand still before a read looks past the
 * transactions of other databases on the server that hold it (readPageSql).
 */
export const HORIZON_STILL_MS = 100;

/** The largest xid8: named to a read, it looks past other databases' transactions whatever the xmin. */
const ANY_XMIN = '18446744073709551615';

/**
 * The newest snapshot xmin the feed's reads have seen, and since when; and the transaction that
 * holds the horizon, since when, and whether it was reported.
 */
class HorizonWatch {
  private xmin: bigint | null = null;
  private since = 0;
  private heldBy: string | null = null;
  private heldSince = 0;
  private heldReported = false;

  /** `warnMs`: how long a transaction holds the horizon before `held` answers. */
  constructor(private readonly warnMs: number) {}

  /** The xmin to name to a read beginning `now`: the one seen, once it has stood still long enough. */
  stillAt(now: number): string | null {
    return this.xmin !== null && now - this.since >= HORIZON_STILL_MS ? String(this.xmin) : null;
  }

  /** A read saw `xmin` (reads that end out of order may report an older one: it is ignored). */
  saw(xmin: string, now: number): void {
    const seen = BigInt(xmin);
    if (this.xmin !== null && seen <= this.xmin) return;
    this.xmin = seen;
    this.since = now;
  }

  /**
   * A read that named the xmin found the horizon held by `xid`, a transaction of this database
   * (null: by none); answers how long it has been held when that has reached `warnMs` and was not
   * answered before, else null.
   */
  held(xid: string | null, now: number): number | null {
    if (xid !== this.heldBy) {
      this.heldBy = xid;
      this.heldSince = now;
      this.heldReported = false;
    }
    if (xid === null || this.heldReported || now - this.heldSince < this.warnMs) return null;
    this.heldReported = true;
    return now - this.heldSince;
  }
}

const STATUS_TOMBSTONED = 2;
const STATUS_SOFT_DELETED = 1;

/** The default event store: PostgreSQL tables (docs/event-store.md) over the app's pool. */
export class PostgresEventStore implements EventStore {
  readonly writesAlongside = true;
  private readonly notifier = new AppendNotifier();
  /**
   * Reads of the feed in flight, by position and filter, with their size and the append mark they
   * began at: the read models and the integration relay wake on the same append and ask for the
   * same page, which is then read once. Each entry goes when its read ends.
   */
  private readonly pagesInFlight = new Map<
    string,
    { mark: number; maxCount: number | null; page: Promise<FeedPage> }
  >();
  private readonly horizon: HorizonWatch;
  private readonly admin: StreamAdmin;
  private closed = false;

  constructor(
    readonly pool: Pool,
    private readonly options: PostgresEventStoreOptions,
  ) {
    this.horizon = new HorizonWatch(options.heldWarnMs ?? HELD_WARN_MS);
    this.admin = new StreamAdmin(pool);
  }

  async append(streamId: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    const prepared = prepareEvents(streamId, events, this.options.maxEventBytes);
    const result = await runAppend(
      this.pool,
      streamId,
      prepared,
      options.expected ?? 'any',
      this.options.chain?.key ?? null,
      options.alongside,
    );
    this.notifier.notify();
    return result;
  }

  /**
   * Appends inside the caller's open transaction on `client` (e.g. with an outbox row). The
   * events become visible when the caller commits; subscribers of this process find them at
   * their next poll. A refused append aborts the caller's transaction.
   */
  async appendWithin(
    client: ClientBase,
    streamId: string,
    events: EventToAppend[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    const prepared = prepareEvents(streamId, events, this.options.maxEventBytes);
    return runAppend(
      client,
      streamId,
      prepared,
      options.expected ?? 'any',
      this.options.chain?.key ?? null,
      options.alongside,
    );
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const maxCount = checkMaxCount(options.maxCount);
    const { rows } = await this.pool.query<EventRow & { status: number; stream_version: bigint }>({
      name: backwards ? 'parley_es_read_stream_bwd' : 'parley_es_read_stream_fwd',
      text: backwards ? READ_STREAM_BACKWARDS_SQL : READ_STREAM_FORWARDS_SQL,
      values: [streamId, options.fromRevision ?? (backwards ? null : 0n), maxCount],
    });
    const head = rows[0];
    if (head?.status === STATUS_TOMBSTONED) throw new StreamDeleted(streamId);
    if (!head || head.status === STATUS_SOFT_DELETED || BigInt(head.stream_version) < 0n) {
      throw new StreamNotFound(streamId);
    }
    return rows.filter((row) => row.global_position !== null).map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const page = await this.readPage(options.fromPosition ?? null, options.filter, checkMaxCount(options.maxCount));
    return page.events;
  }

  /**
   * A page of the feed. A read from the same position with the same filter that another caller
   * is making, for at least as many events, with no append of this process since it began,
   * serves this one too (each caller gets its own list, cut to its size): what the shared read
   * cannot show, an append of another process, this caller could have missed by a moment as well.
   * A read that awaits an append (`appendAwaited`) looks past other databases' transactions at once
   * (readPageSql) and is shared only with reads that do too.
   */
  async readPage(
    after: string | null,
    filter: EventFilter | undefined,
    maxCount: number | null,
    options: ReadPageOptions = {},
  ): Promise<FeedPage> {
    const awaited = options.appendAwaited === true;
    const key = `${after}|${filter?.categories?.join(',') ?? ''}|${filter?.eventTypes?.join(',') ?? ''}|${awaited}`;
    const mark = this.notifier.mark;
    const shared = this.pagesInFlight.get(key);
    if (shared && shared.mark === mark && covers(shared.maxCount, maxCount))
      return cutPage(await shared.page, maxCount);
    const entry = { mark, maxCount, page: this.queryPage(after, filter, maxCount, awaited) };
    this.pagesInFlight.set(key, entry);
    const forget = () => {
      if (this.pagesInFlight.get(key) === entry) this.pagesInFlight.delete(key);
    };
    entry.page.then(forget, forget);
    return cutPage(await entry.page, maxCount);
  }

  private async queryPage(
    after: string | null,
    filter: EventFilter | undefined,
    maxCount: number | null,
    awaited: boolean,
  ): Promise<FeedPage> {
    const from = after === null ? ({ kind: 'pg', tx: 0n, pos: 0n } as const) : parsePosition(after);
    if (from.kind === 'esdb') {
      throw DomainError.validation(
        [{ path: 'position', message: 'expected pg:<xid8>:<position>' }],
        `'${after}' is not a PostgreSQL position.`,
      );
    }
    const categories = filter?.categories?.length ? filter.categories : null;
    const types = filter?.eventTypes?.length ? filter.eventTypes : null;
    const kind: FilterKind = categories && types ? 'both' : categories ? 'categories' : types ? 'types' : 'none';
    const began = Date.now();
    const still = awaited ? ANY_XMIN : this.horizon.stillAt(began);
    const values: unknown[] = [String(from.tx), from.pos, maxCount, still];
    if (categories) values.push(categories);
    if (types) values.push(types);
    const { rows } = await this.pool.query<
      EventRow & { seen: string; held_by: string | null; head_tx: string | null; head_position: bigint }
    >({
      name: `parley_es_read_page_${kind}`,
      text: readPageSql(kind),
      values,
    });
    const [first] = rows;
    this.horizon.saw(first.seen, began);
    // Only a read that named the xmin knows its holder is this database's (another's may hold the
    // snapshot's xmin for the moments after the xmin moved): the others neither count nor reset.
    if (this.options.onHeld && still !== null) {
      const heldMs = this.horizon.held(first.held_by, began);
      if (heldMs !== null) void this.reportHold(first.held_by!, heldMs);
    }
    if (first.head_tx === null) return { events: [], scannedTo: null };
    const events = rows.filter((row) => row.global_position !== null).map(toRecordedEvent);
    const full = maxCount !== null && events.length >= maxCount;
    const scannedTo = full ? events[events.length - 1].position : pgPosition(first.head_tx, first.head_position);
    return { events, scannedTo };
  }

  /** Tells `onHeld` who holds the feed: its backend, or its prepared transaction. */
  private async reportHold(xid: string, heldMs: number): Promise<void> {
    try {
      const { rows } = await this.pool.query<{
        pid: number | null;
        application_name: string | null;
        state: string | null;
        xact_start: Date | null;
        query: string | null;
        prepared: string | null;
      }>(
        `select a.pid, a.application_name, a.state, a.xact_start, left(a.query, 200) as query, null as prepared
           from pg_stat_activity a where a.backend_xid = xid($1::xid8)
         union all
         select null, null, null, p.prepared, null, p.gid from pg_prepared_xacts p where p.transaction = xid($1::xid8)
         limit 1`,
        [xid],
      );
      const row = rows[0];
      this.options.onHeld!({
        xid,
        heldMs,
        pid: row?.pid ?? null,
        applicationName: row?.application_name ?? null,
        state: row?.state ?? null,
        transactionStart: row?.xact_start ?? null,
        query: row?.query ?? null,
        prepared: row?.prepared ?? null,
      });
    } catch {
      // Only a report: the feed reads on regardless.
    }
  }

  appendMark(): number {
    return this.notifier.mark;
  }

  waitForAppend(timeoutMs: number, signal?: AbortSignal, mark?: number): Promise<void> {
    return this.notifier.wait(timeoutMs, signal, mark);
  }

  subscribeToAll(options: SubscribeOptions = {}): AsyncIterable<SubscriptionItem> {
    if (options.fromPosition) parsePosition(options.fromPosition);
    return catchUp(this, {
      ...options,
      pageSize: this.options.pageSize ?? 500,
      pollMs: this.options.pollMs,
      isClosed: () => this.closed,
    });
  }

  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    return this.admin.setMetadata(streamId, metadata);
  }

  getStreamMetadata(streamId: string): Promise<StreamMetadata | null> {
    return this.admin.getMetadata(streamId);
  }

  deleteStream(streamId: string): Promise<void> {
    return this.admin.softDelete(streamId);
  }

  tombstoneStream(streamId: string): Promise<void> {
    return this.admin.tombstone(streamId);
  }

  /** Checks every stored event of the stream, hidden (truncated, deleted) ones included. */
  async verifyStream(streamId: string): Promise<VerifyResult> {
    const head = await this.admin.head(streamId);
    if (!head || head.version < 0n) throw new StreamNotFound(streamId);
    const verifier = new ChainVerifier(undefined, this.options.chain);
    let after = -1n;
    let lastHash: string | null = null;
    for (;;) {
      const { rows } = await this.pool.query<EventRow>({
        name: 'parley_es_read_chain',
        text: READ_CHAIN_SQL,
        values: [streamId, after, 1000],
      });
      for (const row of rows) {
        if (!verifier.check(toRecordedEvent(row))) return verifier.result();
        after = BigInt(row.revision);
        lastHash = row.hash;
      }
      if (rows.length < 1000) break;
    }
    if (after !== head.version || lastHash !== head.lastHash) {
      return { ...verifier.result(), ok: false, firstBadRevision: after + 1n, reason: 'events are missing' };
    }
    return verifier.result();
  }

  async headPosition(): Promise<string | null> {
    const { rows } = await this.pool.query<{ tx: string; global_position: bigint }>({
      name: 'parley_es_head',
      text: HEAD_POSITION_SQL,
    });
    return rows[0] ? pgPosition(rows[0].tx, rows[0].global_position) : null;
  }

  async streamRevisions(streamIds: readonly string[]): Promise<Map<string, bigint>> {
    if (streamIds.length === 0) return new Map();
    const { rows } = await this.pool.query<{ stream_id: string; version: bigint }>({
      name: 'parley_es_stream_revisions',
      text: STREAM_REVISIONS_SQL,
      values: [streamIds],
    });
    return new Map(rows.map((r) => [r.stream_id, BigInt(r.version)]));
  }

  /** Ends live subscriptions. The pool belongs to whoever created it and stays open. */
  async close(): Promise<void> {
    this.closed = true;
    this.notifier.notify();
  }
}

/** Whether a read of up to `read` events holds every event a read of up to `wanted` would (null: no limit). */
const covers = (read: number | null, wanted: number | null): boolean =>
  read === null || (wanted !== null && wanted <= read);

/** A page cut to `maxCount` events, in a list of its own: where it ends is then the last event kept. */
function cutPage(page: FeedPage, maxCount: number | null): FeedPage {
  if (maxCount === null || page.events.length < maxCount) return { ...page, events: [...page.events] };
  const events = page.events.slice(0, maxCount);
  return { events, scannedTo: events[events.length - 1].position };
}

function checkMaxCount(maxCount: number | undefined): number | null {
  if (maxCount === undefined) return null;
  if (!Number.isInteger(maxCount) || maxCount < 1) {
    throw DomainError.validation([{ path: 'maxCount', message: 'expected a whole number of at least 1' }]);
  }
  return maxCount;
}

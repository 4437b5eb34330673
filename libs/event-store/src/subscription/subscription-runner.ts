import { Client, type ClientBase, type ClientConfig, type Pool, type PoolClient } from 'pg';
import type { EventFilter, GlobalFeed, RecordedEvent } from '../event-store.port';
import { comparePositions, maxPosition } from '../position';
import {
  beginLocked,
  checkpointSwap,
  loadCheckpoint,
  readCheckpoint,
  resetSubscription,
  writeCheckpoint,
  type Statement,
} from './checkpoints';
import { AWAITED, HiddenAppends, sleep } from './hidden-appends';
import { PositionWaiters } from './position-waiters';

/** A subscription's settings, whichever way it applies its batches. */
export interface SubscriptionSettings {
  /** PostgreSQL: checkpoints, the advisory lock, and the transaction `handle` writes in. */
  pool: Pool;
  feed: GlobalFeed;
  subscriptionId: string;
  filter?: EventFilter;
  batchSize?: number;
  pollMs?: number;
  /** Pause before retrying a batch whose handler or commit failed. */
  retryMs?: number;
  /**
   * After a wake-up, wait this long before reading, so a burst of appends is read as one batch
   * instead of one read and one transaction per append (default 0).
   */
  coalesceMs?: number;
  /** How often a standby tries to take the lock over. */
  lockRetryMs?: number;
  /**
   * False: a batch commits without waiting for its WAL flush (`synchronous_commit = off`, for
   * that transaction, or for the subscription's own connection with `writeBatch`). A database
   * crash may then lose the last batches, checkpoint included, so use it only where redoing them
   * is harmless and nothing outside the database saw them (default true).
   */
  synchronousCommit?: boolean;
  onError?(err: unknown): void;
}

/** One of `handle`, `react` or `writeBatch` applies the batches. */
export type SubscriptionRunnerOptions = SubscriptionSettings &
  (
    | {
        /** Applies a batch inside `tx`; the runner writes the checkpoint in the same transaction. */
        handle(events: RecordedEvent[], tx: PoolClient): Promise<void>;
        react?: never;
        writeBatch?: never;
      }
    | {
        /**
         * Reacts to a batch before the checkpoint moves past it, with no transaction open: for
         * work outside PostgreSQL that is safe to repeat (jobs stored by id), which may read
         * through the pool meanwhile — a pool of one connection (the embedded database) would
         * otherwise wait on itself. A batch whose checkpoint then fails to move is reacted to again.
         */
        react(events: RecordedEvent[]): Promise<void>;
        handle?: never;
        writeBatch?: never;
      }
    | {
        /**
         * For a handler that writes a whole batch in one statement: called with the
         * subscription's own connection, outside any transaction. It sends its writes and
         * `checkpoint.statement` as one statement that writes nothing unless the checkpoint's
         * compare-and-set returns its row, and resolves whether it did. Reads it needs first go
         * on `db` too; the compare-and-set voids the batch if anything moved the checkpoint
         * meanwhile. A batch is then one round trip (plus those reads) instead of four.
         */
        writeBatch(events: RecordedEvent[], db: ClientBase, checkpoint: CheckpointSwap): Promise<boolean>;
        handle?: never;
        react?: never;
      }
  );

/** The move of the checkpoint that ends a batch, for a handler that sends it with its writes. */
export interface CheckpointSwap {
  /** Where the batch starts: the checkpoint as this instance last committed or read it. */
  expected: string | null;
  /**
   * The compare-and-set, as an update to send as a data-modifying CTE: it returns a row only when
   * the checkpoint still holds `expected`, and moves it then. Parameters numbered from `$first`.
   */
  statement(first: number): Statement;
}

const noop = () => undefined;

/**
 * Runs one checkpointed subscription (a projection, a relay): one active instance per
 * subscription id across processes (pg_try_advisory_lock on a dedicated connection; other
 * instances wait as hot standbys and take over when the holder's connection dies), batches
 * read by the ordering rule, and each batch applied and checkpointed together (with `handle` in
 * one transaction, with `writeBatch` in one statement) with a compare-and-set on the previous
 * checkpoint — a crash before the commit leaves neither; with `react`, the batch is reacted to
 * first and the checkpoint then moves by that compare-and-set alone.
 */
export class SubscriptionRunner {
  /** How far this subscription has processed (or scanned past non-matching events). */
  position: string | null = null;
  caughtUp = false;
  /** True while this instance holds the lock and processes events. */
  active = false;
  lastError: unknown = null;

  private readonly stopping = new AbortController();
  private wakeUp = new AbortController();
  private readonly waiters = new PositionWaiters();
  private loop: Promise<void> | null = null;

  constructor(private readonly options: SubscriptionRunnerOptions) {}

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Resolves true once the subscription has processed `position`, false after `timeoutMs`. */
  waitForPosition(position: string, timeoutMs: number): Promise<boolean> {
    if (this.position !== null && comparePositions(this.position, position) >= 0) return Promise.resolve(true);
    return this.waiters.wait(position, timeoutMs);
  }

  /** Rebuild from the beginning; `prepare` clears the read model in the reset's transaction. */
  async reset(prepare?: (tx: ClientBase) => Promise<void>): Promise<void> {
    await resetSubscription(this.options.pool, this.options.subscriptionId, prepare);
    this.wakeUp.abort();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    this.waiters.cancelAll();
  }

  private report(err: unknown): void {
    this.lastError = err;
    this.options.onError?.(err);
  }

  private async run(): Promise<void> {
    const { lockRetryMs = 1000, retryMs = 1000 } = this.options;
    while (!this.stopping.signal.aborted) {
      const lock = await this.acquireLock();
      if (!lock) {
        await sleep(lockRetryMs, this.stopping.signal);
        continue;
      }
      try {
        this.active = true;
        await this.process(lock.client, lock.lost);
      } catch (err) {
        this.report(err);
        await sleep(retryMs, this.stopping.signal);
      } finally {
        this.active = false;
        this.caughtUp = false;
        // Destroying the connection releases the session lock even if unlocking would fail.
        await lock.client.end().catch(() => undefined);
      }
    }
  }

  /**
   * The session lock lives on a connection of its own, outside the pool: a process runs several
   * subscriptions, and pooled connections held for ever would starve the queries that share it.
   */
  private async acquireLock(): Promise<{ client: Client; lost: AbortSignal } | null> {
    const client = new Client((this.options.pool as Pool & { options: ClientConfig }).options);
    client.on('error', noop);
    try {
      await client.connect();
    } catch (err) {
      this.report(err);
      await client.end().catch(() => undefined);
      return null;
    }
    const lost = new AbortController();
    client.on('error', () => lost.abort());
    client.on('end', () => lost.abort());
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        `select pg_try_advisory_lock(hashtextextended('parley.subscription:' || $1, 0)) as locked`,
        [this.options.subscriptionId],
      );
      if (rows[0]?.locked) return { client, lost: lost.signal };
    } catch (err) {
      this.report(err);
    }
    await client.end().catch(() => undefined);
    return null;
  }

  private async process(own: Client, lost: AbortSignal): Promise<void> {
    const { pool, feed, subscriptionId, filter, batchSize = 100, pollMs = 200, retryMs = 1000 } = this.options;
    const coalesceMs = this.options.coalesceMs ?? 0;
    if (!this.options.handle && this.options.synchronousCommit === false)
      await own.query('set synchronous_commit = off');
    let position = await loadCheckpoint(pool, subscriptionId);
    this.advance(position);
    let woke = false;
    const hidden = new HiddenAppends(pollMs);
    // One composite signal per lease, not per wait: each AbortSignal.any leaves an entry in its
    // sources' dependants that Node does not remove, which grew with every poll and every append.
    const ended = AbortSignal.any([this.stopping.signal, lost]);
    while (!ended.aborted) {
      try {
        const afterWait = woke;
        woke = false;
        // Taken before the read: an append while this batch is read and applied ends the wait below at once.
        const mark = feed.appendMark();
        // Woken by an append of this process, or retrying one the last read did not show: read past
        // other databases' transactions at once.
        const page = await feed.readPage(position, filter, batchSize, hidden.pending ? AWAITED : undefined);
        const short = page.events.length < batchSize;
        const last = page.events.at(-1)?.position ?? null;
        const target = short ? maxPosition(last, page.scannedTo) : last;
        const moved = target !== null && (position === null || comparePositions(target, position) > 0);
        hidden.read(moved);
        if (moved) {
          if (!(await this.commit(own, position, page.events, target))) {
            position = await readCheckpoint(pool, subscriptionId);
            this.advance(position);
            continue;
          }
          position = target;
          this.advance(position);
        } else if (afterWait) {
          // Notices a reset or rebuild made while this instance was idle. When there is a batch,
          // the compare-and-set of its commit notices it instead, without this round trip.
          const stored = await readCheckpoint(pool, subscriptionId);
          if (stored !== position) {
            this.advance((position = stored));
            continue;
          }
        }
        this.caughtUp = short;
        if (!short) continue;
        if (hidden.pending) {
          await sleep(hidden.nextRetryMs(), ended);
          continue;
        }
        const wakeUp = (this.wakeUp = new AbortController());
        const forward = () => wakeUp.abort();
        ended.addEventListener('abort', forward, { once: true });
        try {
          await feed.waitForAppend(pollMs, wakeUp.signal, mark);
        } finally {
          ended.removeEventListener('abort', forward);
        }
        if (feed.appendMark() !== mark) hidden.appended();
        if (coalesceMs > 0) await sleep(coalesceMs, ended);
        woke = true;
      } catch (err) {
        this.report(err);
        await sleep(retryMs, ended);
        position = await readCheckpoint(pool, subscriptionId);
        this.advance(position);
      }
    }
  }

  /** Applies a batch and moves the checkpoint with it; false when the checkpoint moved under us. */
  private async commit(
    own: Client,
    expected: string | null,
    events: RecordedEvent[],
    target: string,
  ): Promise<boolean> {
    const { writeBatch, subscriptionId } = this.options;
    if (this.options.handle) return this.commitInTransaction(expected, events, target);
    const checkpoint: CheckpointSwap = {
      expected,
      statement: (first) => checkpointSwap(subscriptionId, expected, target, first),
    };
    if (events.length > 0 && writeBatch) return writeBatch(events, own, checkpoint);
    // Reacted to first, outside any transaction; then the checkpoint moves by one compare-and-set
    // statement, so no transaction (nor the xid that would hold back every reader's horizon)
    // stays open across round trips.
    if (events.length > 0) await this.options.react?.(events);
    const { text, values } = checkpoint.statement(1);
    // Prepared once on the subscription's own connection: it runs after every batch.
    return own.query({ name: 'parley_checkpoint_swap', text, values }).then((result) => result.rowCount === 1);
  }

  /** One batch and its checkpoint in one transaction that holds the checkpoint row from its start. */
  private async commitInTransaction(
    expected: string | null,
    events: RecordedEvent[],
    target: string,
  ): Promise<boolean> {
    const tx = await this.options.pool.connect();
    tx.on('error', noop);
    try {
      const { subscriptionId, synchronousCommit = true, handle } = this.options;
      if (!(await beginLocked(tx, subscriptionId, expected, { synchronousCommit }))) {
        await tx.query('rollback');
        tx.off('error', noop);
        tx.release();
        return false;
      }
      if (events.length > 0) await handle?.(events, tx);
      await writeCheckpoint(tx, subscriptionId, target);
      await tx.query('commit');
      tx.off('error', noop);
      tx.release();
      return true;
    } catch (err) {
      await tx.query('rollback').catch(noop);
      tx.release(true);
      throw err;
    }
  }

  private advance(position: string | null): void {
    this.position = position;
    if (position !== null) this.waiters.reached(position);
  }
}

/** Starts a SubscriptionRunner; `stop()` it on shutdown. */
export function runSubscription(options: SubscriptionRunnerOptions): SubscriptionRunner {
  return new SubscriptionRunner(options).start();
}

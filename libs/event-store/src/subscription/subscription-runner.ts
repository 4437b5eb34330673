import { Client, type ClientBase, type ClientConfig, type Pool, type PoolClient } from 'pg';
import type { EventFilter, RecordedEvent } from '../event-store.port';
import { comparePositions, maxPosition } from '../position';
import {
  beginLocked,
  checkpointUpdate,
  loadCheckpoint,
  readCheckpoint,
  resetSubscription,
  writeCheckpoint,
  type Statement,
} from './checkpoints';
import type { GlobalFeed } from './global-feed';
import { PositionWaiters } from './position-waiters';

export interface SubscriptionRunnerOptions {
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
   * False: a batch's transaction commits without waiting for its WAL flush
   * (`synchronous_commit = off`, for that transaction only). A database crash may then lose the
   * last batches, checkpoint included, so use it only where redoing them is harmless and nothing
   * outside the database saw them (default true).
   */
  synchronousCommit?: boolean;
  /** Applies a batch inside `tx`; the checkpoint is written in the same transaction. */
  handle(events: RecordedEvent[], tx: PoolClient, checkpoint: CheckpointUpdate): Promise<void>;
  onError?(err: unknown): void;
}

/** The checkpoint update that ends a batch, for a handler that sends it with its own writes. */
export interface CheckpointUpdate {
  /**
   * Hands the update over to the handler, which must then run it in `tx` (alone or as a
   * data-modifying CTE); the runner no longer sends it. Its parameters are numbered from `$first`.
   */
  take(first: number): Statement;
}

const noop = () => undefined;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * Runs one checkpointed subscription (a projection, a relay): one active instance per
 * subscription id across processes (pg_try_advisory_lock on a dedicated connection; other
 * instances wait as hot standbys and take over when the holder's connection dies), batches
 * read by the ordering rule, and each batch applied and checkpointed in one transaction with
 * a compare-and-set on the previous checkpoint — a crash before the commit leaves neither.
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
        await this.process(lock.lost);
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

  private async process(lost: AbortSignal): Promise<void> {
    const { pool, feed, subscriptionId, filter, batchSize = 100, pollMs = 200, retryMs = 1000 } = this.options;
    const coalesceMs = this.options.coalesceMs ?? 0;
    let position = await loadCheckpoint(pool, subscriptionId);
    this.advance(position);
    let woke = false;
    while (!this.stopping.signal.aborted && !lost.aborted) {
      try {
        const afterWait = woke;
        woke = false;
        const page = await feed.readPage(position, filter, batchSize);
        const short = page.events.length < batchSize;
        const last = page.events.at(-1)?.position ?? null;
        const target = short ? maxPosition(last, page.scannedTo) : last;
        if (target !== null && (position === null || comparePositions(target, position) > 0)) {
          if (!(await this.commit(position, page.events, target))) {
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
        this.wakeUp = new AbortController();
        await feed.waitForAppend(pollMs, AbortSignal.any([this.stopping.signal, lost, this.wakeUp.signal]));
        if (coalesceMs > 0) await sleep(coalesceMs, AbortSignal.any([this.stopping.signal, lost]));
        woke = true;
      } catch (err) {
        this.report(err);
        await sleep(retryMs, AbortSignal.any([this.stopping.signal, lost]));
        position = await readCheckpoint(pool, subscriptionId);
        this.advance(position);
      }
    }
  }

  /** One batch and its checkpoint in one transaction; false when the checkpoint moved under us. */
  private async commit(expected: string | null, events: RecordedEvent[], target: string): Promise<boolean> {
    const tx = await this.options.pool.connect();
    tx.on('error', noop);
    try {
      const { subscriptionId, synchronousCommit = true } = this.options;
      if (!(await beginLocked(tx, subscriptionId, expected, { synchronousCommit }))) {
        await tx.query('rollback');
        tx.off('error', noop);
        tx.release();
        return false;
      }
      let taken = false;
      const checkpoint: CheckpointUpdate = {
        take(first) {
          taken = true;
          return checkpointUpdate(subscriptionId, target, first);
        },
      };
      if (events.length > 0) await this.options.handle(events, tx, checkpoint);
      if (!taken) await writeCheckpoint(tx, subscriptionId, target);
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

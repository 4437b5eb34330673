import { DomainError } from '@parley/core';
import {
  rawStoreOf,
  comparePositions,
  lockCheckpoint,
  maxPosition,
  minPosition,
  writeCheckpoint,
  type GlobalFeed,
} from '@parley/event-store';
import type { ClientBase, Pool } from 'pg';
import { applyProjections } from './apply-projections';
import { projectedEvents, type ProjectedEvent } from './projected-event';
import type { Projection } from './projection';
import { CONVERSATION_FILTER } from './projection-runner';
import { PROJECTIONS, READ_MODELS_SUBSCRIPTION } from './projections';

const shadowOf = (table: string) => `${table}__rebuild`;

export interface RebuildResult {
  events: number;
  ms: number;
  position: string | null;
}

/** Reads the feed after `from` page by page, applying each page via `apply`; returns where it got. */
async function catchUp(
  feed: GlobalFeed,
  from: string | null,
  batchSize: number,
  apply: (events: ProjectedEvent[]) => Promise<void>,
): Promise<{ position: string | null; events: number }> {
  let position = from;
  let count = 0;
  for (;;) {
    const page = await feed.readPage(position, CONVERSATION_FILTER, batchSize);
    if (page.events.length > 0) await apply(projectedEvents(page.events));
    count += page.events.length;
    const last = page.events.at(-1)?.position ?? null;
    const next = page.events.length < batchSize ? maxPosition(last, page.scannedTo) : last;
    if (next !== null && (position === null || comparePositions(next, position) > 0)) position = next;
    if (page.events.length < batchSize) return { position, events: count };
  }
}

async function inTransaction<T>(pool: Pool, fn: (tx: ClientBase) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  try {
    await tx.query('begin');
    const result = await fn(tx);
    await tx.query('commit');
    tx.release();
    return result;
  } catch (err) {
    await tx.query('rollback').catch(() => undefined);
    tx.release(true);
    throw err;
  }
}

/**
 * Rebuilds read models from position zero while the service runs: builds shadow tables
 * (`<table>__rebuild`) page by page, then, in one transaction holding the tables it replaces and
 * the `read-models` checkpoint row (so the live projector and readers of those tables wait),
 * applies the last events, swaps the tables by renaming them and moves the checkpoint to where
 * the catch-up got. The checkpoint is shared
 * with the read models not rebuilt, so the catch-up starts from the earlier of the live
 * checkpoint and the shadow's position and applies each page to their live tables too:
 * projections are idempotent, so events applied twice change nothing. A live projector whose
 * batch was waiting finds its checkpoint moved, drops that batch and resumes from the new
 * checkpoint. Holds three connections of `pool` at once (the lock, the swap transaction, feed
 * reads).
 */
export async function rebuildProjections(
  pool: Pool,
  feed: GlobalFeed,
  projections: readonly Projection[],
  batchSize = 1000,
): Promise<RebuildResult> {
  const started = performance.now();
  // The stored events: rebuilt read models keep content sealed, as the live ones do.
  feed = rawStoreOf(feed);
  const lock = await pool.connect();
  try {
    const { rows } = await lock.query<{ locked: boolean }>(
      `select pg_try_advisory_lock(hashtextextended('parley.read-model-rebuild', 0)) as locked`,
    );
    if (!rows[0]?.locked) throw new DomainError('CONFLICT', 'Another rebuild of the read models is running.');
    const chosen = new Set(projections.map((p) => p.name));
    const others = PROJECTIONS.filter((p) => !chosen.has(p.name));
    const tables = projections.flatMap((p) => p.models.map((m) => m.table));
    const rebuilt = new Set(tables);
    // The tail writes the shadows of the rebuilt read models and the live tables of the others.
    const shadowOrLive = (table: string) => (rebuilt.has(table) ? shadowOf(table) : table);
    for (const table of tables) {
      await pool.query(`drop table if exists ${shadowOf(table)}`);
      await pool.query(`create table ${shadowOf(table)} (like ${table} including all)`);
    }
    const bulk = await catchUp(feed, null, batchSize, async (events) => {
      await inTransaction(pool, (tx) => applyProjections(tx, projections, events, shadowOf));
    });
    const tail = await inTransaction(pool, async (tx) => {
      const id = READ_MODELS_SUBSCRIPTION;
      // The live tables to replace first, then the checkpoint: the projector's batch statement
      // takes its tables before the checkpoint row, so both lock in the same order.
      await tx.query(`lock table ${tables.join(', ')} in access exclusive mode`);
      const from = minPosition(await lockCheckpoint(tx, id), bulk.position);
      let fresh = 0;
      const caught = await catchUp(feed, from, batchSize, async (events) => {
        await applyProjections(tx, [...projections, ...others], events, shadowOrLive);
        fresh += events.filter((e) => bulk.position === null || comparePositions(e.position, bulk.position) > 0).length;
      });
      for (const table of tables) {
        await tx.query(`drop table ${table}`);
        await tx.query(`alter table ${shadowOf(table)} rename to ${table}`);
      }
      await writeCheckpoint(tx, id, caught.position);
      return { position: caught.position, events: fresh };
    });
    return { events: bulk.events + tail.events, ms: performance.now() - started, position: tail.position };
  } finally {
    lock.release(true);
  }
}

import { CONVERSATION_CATEGORY } from '@parley/domain';
import { rawStoreOf, runSubscription, type GlobalFeed, type SubscriptionRunner } from '@parley/event-store';
import type { Pool } from 'pg';
import { applyProjections } from './apply-projections';
import { projectedEvents } from './projected-event';
import type { Projection } from './projection';
import { READ_MODELS_SUBSCRIPTION } from './projections';

export const CONVERSATION_FILTER = { categories: [CONVERSATION_CATEGORY] };

const live = (table: string) => table;

export interface ProjectionRunOptions {
  pool: Pool;
  feed: GlobalFeed;
  batchSize?: number;
  pollMs?: number;
  /** Called after each batch, once per projection, with the age of its newest event (projection lag). */
  onLag?(projection: string, lagMs: number): void;
  onError?(err: unknown): void;
}

/**
 * Starts the one checkpointed subscription (`read-models`) that writes the live tables of
 * every projection: a batch is read once and applied to every projection, its rows and the
 * checkpoint's compare-and-set written in one statement on the subscription's own connection.
 */
export function runProjections(projections: readonly Projection[], options: ProjectionRunOptions): SubscriptionRunner {
  const { pool, batchSize = 500, pollMs, onLag, onError } = options;
  // The stored events: the read models keep content sealed; the queries open it.
  const feed = rawStoreOf(options.feed);
  return runSubscription({
    pool,
    feed,
    subscriptionId: READ_MODELS_SUBSCRIPTION,
    filter: CONVERSATION_FILTER,
    batchSize,
    pollMs,
    retryMs: 500,
    // A burst of appends (one conversation turn) is read and committed as one batch, while the
    // lag stays far under the 100 ms goal.
    coalesceMs: 15,
    // The read-model rows and the checkpoint commit in the same statement, so a database crash
    // loses both together and the projections re-apply from the older checkpoint; read models
    // are rebuildable from the event store anyway. Not waiting for the WAL flush is safe here.
    synchronousCommit: false,
    async writeBatch(events, db, checkpoint) {
      const moved = await applyProjections(db, projections, projectedEvents(events), live, checkpoint.statement);
      const newest = events.at(-1);
      if (moved && newest) {
        const lagMs = Date.now() - newest.createdAt.getTime();
        for (const projection of projections) onLag?.(projection.name, lagMs);
      }
      return moved;
    },
    onError,
  });
}

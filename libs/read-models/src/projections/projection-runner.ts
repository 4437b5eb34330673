import { CONVERSATION_CATEGORY } from '@parley/conversation';
import { runSubscription, type GlobalFeed, type SubscriptionRunner } from '@parley/event-store';
import type { Pool } from 'pg';
import { projectedEvent } from './projected-event';
import type { Projection } from './projection';
import { subscriptionIdOf } from './projections';

export const CONVERSATION_FILTER = { categories: [CONVERSATION_CATEGORY] };

const live = (table: string) => table;

export interface ProjectionRunOptions {
  pool: Pool;
  feed: GlobalFeed;
  batchSize?: number;
  pollMs?: number;
  /** Called after each batch with the age of its newest event (projection lag). */
  onLag?(projection: string, lagMs: number): void;
  onError?(projection: string, err: unknown): void;
}

/** Starts the checkpointed subscription of one projection, writing its live tables. */
export function runProjection(projection: Projection, options: ProjectionRunOptions): SubscriptionRunner {
  const { pool, feed, batchSize = 500, pollMs, onLag, onError } = options;
  return runSubscription({
    pool,
    feed,
    subscriptionId: subscriptionIdOf(projection),
    filter: CONVERSATION_FILTER,
    batchSize,
    pollMs,
    retryMs: 500,
    // Eight projections follow the same feed: reading each burst of appends once keeps their
    // cost per turn flat while the lag stays far under the 100 ms goal.
    coalesceMs: 15,
    async handle(events, tx) {
      await projection.apply(events.map(projectedEvent), tx, live);
      const newest = events.at(-1);
      if (newest) onLag?.(projection.name, Date.now() - newest.createdAt.getTime());
    },
    onError: (err) => onError?.(projection.name, err),
  });
}

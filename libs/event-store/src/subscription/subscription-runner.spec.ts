import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import type { Pool } from 'pg';
import { events, eventually } from '../contract/contract-kit';
import { PostgresEventStore } from '../postgres/postgres-event-store';
import { SubscriptionRunner } from './subscription-runner';

/** How many signals derive from `signal` (AbortSignal.any): Node keeps an entry for each. */
function dependantsOf(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  return key ? ((signal as unknown as Record<symbol, Set<unknown>>)[key]?.size ?? 0) : 0;
}

describe('SubscriptionRunner', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await createTestDatabase('subscription_runner');
    pool = createPgPool({ url: database.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1_048_576, pollMs: 10 });
  });
  afterAll(async () => {
    await store?.close();
    await pool?.end();
    await database?.drop();
  });

  it('derives no signal per poll or per append from its long-lived ones, however long it waits', async () => {
    const handled: number[] = [];
    const errors: unknown[] = [];
    const runner = new SubscriptionRunner({
      pool,
      feed: store,
      subscriptionId: 'dependants-test',
      pollMs: 10,
      handle: async (batch) => void handled.push(batch.length),
      onError: (err) => errors.push(err),
    }).start();
    const stopping = (runner as unknown as { stopping: AbortController }).stopping.signal;
    for (let i = 0; i < 20; i++) {
      await store.append(`dependants-${i}`, events(1));
      await new Promise((r) => setTimeout(r, 25));
    }
    await eventually(async () => expect(handled.reduce((a, b) => a + b, 0)).toBe(20));
    await new Promise((r) => setTimeout(r, 200));
    expect(errors).toEqual([]);
    // Dozens of polls and twenty wake-ups: one composite for the lease, none per wait.
    expect(dependantsOf(stopping)).toBeLessThanOrEqual(1);
    await runner.stop();
  });
});

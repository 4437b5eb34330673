import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { Client, type Pool } from 'pg';
import type { ReadPageOptions } from '../event-store.port';
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

  it("reads an append of its process past another database's transaction at once, while that stays open", async () => {
    const other = await createTestDatabase('subscription_runner_elsewhere');
    const elsewhere = new Client({ connectionString: other.url });
    await elsewhere.connect();
    const reads: (ReadPageOptions | undefined)[] = [];
    const readPage = store.readPage.bind(store);
    jest.spyOn(store, 'readPage').mockImplementation((after, filter, maxCount, options) => {
      reads.push(options);
      return readPage(after, filter, maxCount, options);
    });
    const handled: string[] = [];
    const runner = new SubscriptionRunner({
      pool,
      feed: store,
      subscriptionId: 'held-elsewhere',
      pollMs: 10_000,
      handle: async (batch) => void handled.push(...batch.map((e) => e.streamId)),
    }).start();
    try {
      await eventually(async () => expect(runner.caughtUp).toBe(true));
      await elsewhere.query('begin');
      await elsewhere.query('select pg_current_xact_id()');
      reads.length = 0;
      await store.append('held-elsewhere-1', events(1));
      // Woken by the append, the runner reads past the other database's transaction at once.
      await eventually(async () => expect(handled).toContain('held-elsewhere-1'));
      expect(reads[0]).toEqual({ appendAwaited: true });
    } finally {
      jest.restoreAllMocks();
      await runner.stop();
      await elsewhere.query('commit');
      await elsewhere.end();
      await other.drop();
    }
  });
});

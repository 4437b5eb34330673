import { randomUUID } from 'node:crypto';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, until, type TestDatabase } from '@parley/testing';
import { Client, type Pool, type PoolClient } from 'pg';
import { describeEventStoreContract } from '../contract/event-store.contract';
import type { ReadPageOptions } from '../event-store.port';
import { describeHold } from '../event-store.module';
import { HORIZON_STILL_MS, PostgresEventStore, type FeedHold } from './postgres-event-store';

const MAX_EVENT_BYTES = 2 * 1_048_576;
const options = { maxEventBytes: MAX_EVENT_BYTES, pollMs: 50 };

describeEventStoreContract('PostgresEventStore', async () => {
  const database: TestDatabase = await createTestDatabase('event_store');
  const pools: Pool[] = [];
  const newPool = () => {
    const pool = createPgPool({ url: database.url, max: 12 });
    pools.push(pool);
    return pool;
  };
  const pool = newPool();
  const store = new PostgresEventStore(pool, options);
  return {
    store,
    pool,
    maxEventBytes: MAX_EVENT_BYTES,
    reopen: async () => new PostgresEventStore(newPool(), options),
    holdOpenAppend: async (streamId, events) => {
      const client = await pool.connect();
      let open = true;
      const finish = async (sql: string) => {
        if (!open) return;
        open = false;
        await client.query(sql);
        client.release();
      };
      await client.query('begin');
      const { position } = await store.appendWithin(client, streamId, events);
      return { position, commit: () => finish('commit'), rollback: () => finish('rollback') };
    },
    tamper: async (streamId, revision) => {
      await pool.query(`update es_events set data = '{"n": 999}' where stream_id = $1 and revision = $2`, [
        streamId,
        revision,
      ]);
    },
    close: async () => {
      await store.close();
      await Promise.all(pools.map((p) => p.end()));
      await database.drop();
    },
  };
});

const noted = (n: number) => ({ eventId: randomUUID(), type: 'Noted', data: { n }, metadata: {} });

describe('PostgresEventStore: a page of the feed read by two callers at once', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  const pageReads: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('event_store_pages');
    pool = createPgPool({ url: database.url, max: 4 });
    // Counts the statements that read a page, as PostgreSQL receives them.
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const name = (args[0] as { name?: string }).name;
      if (name?.startsWith('parley_es_read_page')) pageReads.push(name);
      return query(...args);
    };
    store = new PostgresEventStore(pool, options);
    await store.append('conversation-a', [noted(1)]);
    await shows(1);
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });
  beforeEach(() => (pageReads.length = 0));

  const filter = { categories: ['conversation'] };
  // The feed shows an append once every transaction begun before it has ended, on any database
  // of the cluster (docs/event-store.md): other tests' may hold it back a moment.
  const shows = (n: number) => until(async () => (await store.readPage(null, filter, 500)).events.length === n, 10_000);

  it('is read once, and each caller gets the same events in a list of its own', async () => {
    const [a, b] = await Promise.all([store.readPage(null, filter, 500), store.readPage(null, filter, 500)]);
    expect(pageReads).toHaveLength(1);
    expect(a.events.map((e) => e.type)).toEqual(['Noted']);
    expect(b).toEqual(a);
    expect(b.events).not.toBe(a.events);
  });

  it('is read again by a caller that comes after an append of this process, and shows that append', async () => {
    const first = store.readPage(null, filter, 500);
    await store.append('conversation-b', [noted(2)]);
    await Promise.all([first, store.readPage(null, filter, 500)]);
    expect(pageReads).toHaveLength(2);
  });

  it('serves a smaller page from a larger one in flight, cut to its size, and not the other way round', async () => {
    await shows(2);
    pageReads.length = 0;
    const [whole, one] = await Promise.all([store.readPage(null, filter, 500), store.readPage(null, filter, 1)]);
    expect(pageReads).toHaveLength(1);
    expect(whole.events.length).toBeGreaterThan(1);
    expect(one).toEqual({ events: [whole.events[0]], scannedTo: whole.events[0]!.position });
    expect(one).toEqual(await store.readPage(null, filter, 1));
    pageReads.length = 0;
    await Promise.all([store.readPage(null, filter, 1), store.readPage(null, filter, 500)]);
    expect(pageReads).toHaveLength(2);
  });

  it('is read for each caller once the first read has ended, and for another position or filter', async () => {
    await store.readPage(null, filter, 500);
    await store.readPage(null, filter, 500);
    const { events } = await store.readPage(null, filter, 500);
    await Promise.all([
      store.readPage(null, filter, 500),
      store.readPage(events[0]!.position, filter, 500),
      store.readPage(null, { categories: ['other'] }, 500),
    ]);
    expect(pageReads).toHaveLength(6);
  });
});

describe('PostgresEventStore: an append to a long stream', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    database = await createTestDatabase('event_store_long');
    // One connection: es_append's statements are planned once for it and then cached (generic plans).
    pool = createPgPool({ url: database.url, max: 1 });
    store = new PostgresEventStore(pool, options);
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  /** Rows of es_events that index scans fetched in the transaction so far, as PostgreSQL counts them. */
  const fetched = async (client: PoolClient) =>
    Number(
      (
        await client.query<{ n: string }>(
          `select coalesce(idx_tup_fetch, 0) as n from pg_stat_xact_user_tables where relname = 'es_events'`,
        )
      ).rows[0]?.n ?? 0,
    );

  it('looks up its event ids without reading the events already in the stream', async () => {
    for (let batch = 0; batch < 8; batch++)
      await store.append(
        'conversation-long',
        Array.from({ length: 100 }, (_, i) => noted(batch * 100 + i)),
      );
    const client = await pool.connect();
    try {
      await client.query('begin');
      const before = await fetched(client);
      await store.appendWithin(client, 'conversation-long', [noted(800), noted(801)]);
      expect((await fetched(client)) - before).toBeLessThan(10);
      await client.query('commit');
    } finally {
      client.release();
    }
    // A retried append of the same ids is still found and answered as the first one was.
    const last = await store.readStream('conversation-long', { fromRevision: 800n });
    const again = await store.append(
      'conversation-long',
      last.map((e, i) => ({ ...noted(800 + i), eventId: e.eventId })),
    );
    expect(again.nextRevision).toBe(801n);
  });
});

describe('PostgresEventStore: the feed while a write transaction stays open', () => {
  let database: TestDatabase;
  let other: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  const holds: FeedHold[] = [];
  const HELD_WARN = 300;

  beforeAll(async () => {
    [database, other] = await Promise.all([createTestDatabase('event_store_horizon'), createTestDatabase('elsewhere')]);
    pool = createPgPool({ url: database.url, max: 4 });
    store = new PostgresEventStore(pool, { ...options, onHeld: (hold) => holds.push(hold), heldWarnMs: HELD_WARN });
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
    await Promise.all([database.drop(), other.drop()]);
  });
  beforeEach(() => (holds.length = 0));

  /** A transaction with an xid of its own, open on `url` until `end` commits it. */
  const openTransaction = async (url: string) => {
    const client = new Client({ connectionString: url, application_name: 'held-open' });
    await client.connect();
    await client.query('begin');
    const { rows } = await client.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
    return {
      xid: rows[0].xid,
      pid: (client as unknown as { processID: number }).processID,
      end: async () => {
        await client.query('commit');
        await client.end();
      },
    };
  };
  const feedHas = async (streamId: string) =>
    (await store.readPage(null, undefined, 500)).events.some((e) => e.streamId === streamId);
  /** Reads the feed every 20 ms for `ms`, each read checked by `expectation`. */
  const readFor = async (ms: number, expectation: () => Promise<void>) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      await expectation();
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it("reads past another database's transaction once the horizon has stood still, while it is still open", async () => {
    const elsewhere = await openTransaction(other.url);
    try {
      await store.append('conversation-past', [noted(1)]);
      // The snapshot's xmin is the other database's transaction: the first read stops below it,
      // but a read that awaits this process's append looks past it at once.
      expect(await feedHas('conversation-past')).toBe(false);
      const awaited = await store.readPage(null, undefined, 500, { appendAwaited: true });
      expect(awaited.events.map((e) => e.streamId)).toContain('conversation-past');
      await until(() => feedHas('conversation-past'), 10_000, 20);
      // Nor is it reported as holding the feed, however long it stays open. (A read may show less
      // again for a moment: when an older transaction ends, the xmin moves up to this one, and the
      // reads take it as their horizon until it has stood still again. Subscriptions never move back.)
      await readFor(2 * HELD_WARN, async () => {
        await store.readPage(null, undefined, 500);
      });
      expect(holds).toEqual([]);
    } finally {
      await elsewhere.end();
    }
  });

  it("shows a catch-up subscriber an append of its process at once, past another database's open transaction", async () => {
    const slowPolls = new PostgresEventStore(pool, { ...options, pollMs: 10_000 });
    const reads: (ReadPageOptions | undefined)[] = [];
    const readPage = slowPolls.readPage.bind(slowPolls);
    jest.spyOn(slowPolls, 'readPage').mockImplementation((after, filter, maxCount, readOptions) => {
      reads.push(readOptions);
      return readPage(after, filter, maxCount, readOptions);
    });
    const controller = new AbortController();
    const seen: string[] = [];
    let caughtUp = false;
    const reading = (async () => {
      for await (const item of slowPolls.subscribeToAll({ signal: controller.signal })) {
        if (item.kind === 'caughtUp') caughtUp = true;
        else seen.push(item.event.streamId);
      }
    })();
    let elsewhere: Awaited<ReturnType<typeof openTransaction>> | undefined;
    try {
      await until(async () => caughtUp, 10_000, 10);
      // An xid used up first, so the other database's transaction is a horizon no read has seen yet.
      await pool.query('select pg_current_xact_id()');
      elsewhere = await openTransaction(other.url);
      reads.length = 0;
      await slowPolls.append('conversation-subscribed', [noted(3)]);
      // Woken by the append, the read that does not show it is followed within milliseconds by
      // one past the other database's transaction: not by the 10 s poll, nor the horizon's wait.
      await until(async () => seen.includes('conversation-subscribed'), 5_000, 5);
      expect(reads).toContainEqual({ appendAwaited: true });
    } finally {
      controller.abort();
      await reading;
      await elsewhere?.end();
      jest.restoreAllMocks();
      await slowPolls.close();
    }
  });

  it('still waits for a transaction of its own database, however long it stands, reports it, and reads on once it ends', async () => {
    const here = await openTransaction(database.url);
    let ended = false;
    try {
      await store.append('conversation-held', [noted(2)]);
      await readFor(Math.max(5 * HORIZON_STILL_MS, 2 * HELD_WARN), async () =>
        expect(await feedHas('conversation-held')).toBe(false),
      );
      await until(() => holds.length > 0, 5_000, 20);
      expect(holds).toEqual([
        expect.objectContaining({
          xid: here.xid,
          pid: here.pid,
          applicationName: 'held-open',
          state: 'idle in transaction',
          transactionStart: expect.any(Date),
          prepared: null,
        }),
      ]);
      expect(holds[0].heldMs).toBeGreaterThanOrEqual(HELD_WARN);
      expect(describeHold(holds[0])).toContain(`transaction ${here.xid} of this database has held the event feed`);
      expect(describeHold(holds[0])).toContain(`pid ${here.pid} ('held-open'), idle in transaction since`);
      await here.end();
      ended = true;
      await until(() => feedHas('conversation-held'), 10_000, 20);
      expect(holds).toHaveLength(1);
    } finally {
      if (!ended) await here.end();
    }
  });
});

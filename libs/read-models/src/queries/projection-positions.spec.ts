import { streamIdOf } from '@parley/domain';
import { lockCheckpoint, PostgresEventStore, writeCheckpoint } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { conversationScript, createTestDatabase, snapshotFixture, toAppend, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool, QueryConfig } from 'pg';
import { READ_MODELS_SUBSCRIPTION } from '../projections/projections';
import { ProjectionPositions } from './projection-positions';

describe('ProjectionPositions', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let head: string;
  let checkpointReads = 0;

  const moveCheckpoint = async (position: string) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await lockCheckpoint(client, READ_MODELS_SUBSCRIPTION);
      await writeCheckpoint(client, READ_MODELS_SUBSCRIPTION, position);
      await client.query('commit');
    } finally {
      client.release();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('projection_positions');
    pool = createPgPool({ url: db.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 100 });
    const id = randomUUID();
    head = (await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture() }))))
      .position;
    const query = pool.query.bind(pool) as (q: string | QueryConfig, v?: unknown[]) => Promise<unknown>;
    // Counts the checkpoint reads the real pool runs; every query still goes to PostgreSQL.
    jest.spyOn(pool, 'query').mockImplementation(((q: string | QueryConfig, v?: unknown[]) => {
      if (String(typeof q === 'string' ? q : q.text).includes('from es_checkpoints')) checkpointReads += 1;
      return query(q, v);
    }) as never);
  });
  afterAll(async () => {
    await store?.close();
    await pool?.end();
    await db?.drop();
  });

  it('refuses a position past the newest event at once, reading no checkpoint', async () => {
    const positions = new ProjectionPositions(pool, store, 5000);
    const before = checkpointReads;
    const started = Date.now();
    await expect(positions.waitFor('pg:999999999:1')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: [{ path: 'minPosition' }] },
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(checkpointReads).toBe(before);
  });

  it('serves many waiting queries with one checkpoint poller, and times them out with TIMEOUT', async () => {
    const positions = new ProjectionPositions(pool, store, 400);
    const before = checkpointReads;
    const waits = Array.from({ length: 30 }, () =>
      positions.waitFor(head).then(
        () => 'reached',
        (err) => err.code,
      ),
    );
    expect(await Promise.all(waits)).toEqual(Array(30).fill('TIMEOUT'));
    // One poller reads every 20 ms: about 20 reads in 400 ms, where each query polling alone read 600.
    expect(checkpointReads - before).toBeLessThan(60);
  });

  it('lets every waiting query through once the projections reach its position', async () => {
    const positions = new ProjectionPositions(pool, store, 5000);
    const waits = Array.from({ length: 10 }, () => positions.waitFor(head));
    await new Promise((r) => setTimeout(r, 100));
    await moveCheckpoint(head);
    await expect(Promise.all(waits)).resolves.toHaveLength(10);
  });
});

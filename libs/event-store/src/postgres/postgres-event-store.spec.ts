import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import type { Pool } from 'pg';
import { describeEventStoreContract } from '../contract/event-store.contract';
import { PostgresEventStore } from './postgres-event-store';

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

import { streamIdOf } from '@parley/domain';
import { PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { conversationScript, createTestDatabase, snapshotFixture, toAppend, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { UsagePerSubject1732200021000 } from '../../../../migrations/1732200021000-usage-per-subject';
import { runProjections } from './projection-runner';
import { PROJECTIONS } from './projections';

describe('migration to usage per subject', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let dataSource: DataSource;

  const migrate = async (direction: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await new UsagePerSubject1732200021000()[direction](runner);
    } finally {
      await runner.release();
    }
  };
  const project = async () => {
    const runner = runProjections(PROJECTIONS, { pool, feed: store, pollMs: 20 });
    try {
      expect(await runner.waitForPosition((await store.headPosition()) as string, 10_000)).toBe(true);
    } finally {
      await runner.stop();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('usage_subject_migration');
    pool = createPgPool({ url: db.url, max: 6 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 20 });
    dataSource = await new DataSource({ type: 'postgres', url: db.url }).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await store.close();
    await pool.end();
    await db.drop();
  });

  it('counts the usage projected before it again, per subject, from the events', async () => {
    await migrate('down');
    for (const owner of ['client-a', 'client-b', 'client-a']) {
      const id = randomUUID();
      await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture(), owner })));
    }
    // The previous version's totals, without subjects, and its checkpoint at the head.
    await pool.query(
      `insert into rm_usage_daily values (current_date, 'HELPDESK', 'ANSWER', 'SIM-CHAT', 3, 15, 100, 10, 0.01)`,
    );
    const head = (await store.headPosition()) as string;
    const [, tx, position] = head.split(':');
    await pool.query(
      `insert into es_checkpoints (subscription_id, position, last_tx, last_position) values ('read-models', $1, $2, $3)
       on conflict (subscription_id) do update set position = $1, last_tx = $2, last_position = $3`,
      [head, tx, position],
    );

    await migrate('up');
    const checkpoint = await pool.query(`select position from es_checkpoints where subscription_id = 'read-models'`);
    expect(checkpoint.rows).toEqual([{ position: null }]);
    expect((await pool.query('select * from rm_usage_daily')).rows).toEqual([]);
    await project();
    const counted = await pool.query(
      'select subject, conversations::int, model_calls::int, turns::int, errors::int from rm_usage_daily order by 1',
    );
    expect(counted.rows).toEqual([
      { subject: 'client-a', conversations: 2, model_calls: 10, turns: 4, errors: 2 },
      { subject: 'client-b', conversations: 1, model_calls: 5, turns: 2, errors: 1 },
    ]);
    // The other read models saw every event from the beginning.
    expect((await pool.query('select count(*)::int as n from rm_conversations')).rows).toEqual([{ n: 3 }]);
  });
});

import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { ReadModelsCheckpoint1732200007000 } from '../../../../migrations/1732200007000-read-models-checkpoint';

const OLD = ['conversations', 'messages', 'attachments', 'tool-calls', 'model-calls', 'pending', 'usage'];

describe('migration to one read-models checkpoint', () => {
  let db: TestDatabase;
  let pool: Pool;
  let dataSource: DataSource;

  const migrate = async (direction: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await new ReadModelsCheckpoint1732200007000()[direction](runner);
    } finally {
      await runner.release();
    }
  };
  const checkpoints = async () =>
    (
      await pool.query(
        'select subscription_id, position, last_tx::text, last_position::text from es_checkpoints order by 1',
      )
    ).rows;
  const seed = async (rows: [string, string | null][]) => {
    await pool.query('delete from es_checkpoints');
    for (const [id, position] of rows) {
      const [, tx, pos] = position?.split(':') ?? [];
      await pool.query(
        'insert into es_checkpoints (subscription_id, position, last_tx, last_position) values ($1, $2, $3, $4)',
        [id, position, tx ?? null, pos ?? null],
      );
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('rm_checkpoint');
    pool = createPgPool({ url: db.url, max: 2 });
    dataSource = await new DataSource({ type: 'postgres', url: db.url }).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await pool.end();
    await db.drop();
  });

  it('starts the one checkpoint from the lowest of the seven, by number, and removes theirs', async () => {
    // 'pg:1000:1' sorts before 'pg:900:5' as text, after it as a position.
    const positions = ['pg:1000:1', 'pg:900:5', 'pg:900:7', 'pg:1200:3', 'pg:901:2', 'pg:1000:9', 'pg:950:4'];
    await seed([
      ...OLD.map((name, n): [string, string] => [`read-model:${name}`, positions[n]]),
      ['relay:parley', 'pg:10:1'],
    ]);
    await migrate('up');
    expect(await checkpoints()).toEqual([
      { subscription_id: 'read-models', position: 'pg:900:5', last_tx: '900', last_position: '5' },
      { subscription_id: 'relay:parley', position: 'pg:10:1', last_tx: '10', last_position: '1' },
    ]);
  });

  it('starts from the beginning when one of the seven never checkpointed', async () => {
    await seed([
      ...OLD.slice(1).map((name): [string, string] => [`read-model:${name}`, 'pg:900:5']),
      ['read-model:conversations', null],
    ]);
    await migrate('up');
    expect(await checkpoints()).toEqual([
      { subscription_id: 'read-models', position: null, last_tx: null, last_position: null },
    ]);
  });

  it('down removes the one checkpoint', async () => {
    await seed([['read-models', 'pg:900:5']]);
    await migrate('down');
    expect(await checkpoints()).toEqual([]);
  });
});

import type { ConversationEvent } from '@parley/domain';
import { streamIdOf } from '@parley/domain';
import { PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { conversationScript, createTestDatabase, snapshotFixture, toAppend, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { EmbeddingUsage1732200025300 } from '../../../../migrations/1732200025300-embedding-usage';
import { runProjections } from './projection-runner';
import { PROJECTIONS } from './projections';

/** A turn's embedding calls: two collections searched (one failed), a fact remembered, a recall. */
function embeddingEvents(withMemoryUsage: boolean): ConversationEvent[] {
  const search = { latencyMs: 2, searchMs: 1, hits: 1 };
  return [
    {
      type: 'ContextRetrieved',
      data: {
        turnNo: 1,
        query: 'warranty?',
        searches: [
          { collection: 'FAQ', model: 'EMB', tokens: 7, cost: 0.0007, ...search },
          { collection: 'DOWN', model: null, tokens: 0, cost: 0, latencyMs: 0, searchMs: 0, hits: 0, error: 'down' },
        ],
        chunks: [],
        blocks: 0,
        dropped: [],
        context: null,
        budget: { promptTokens: null, withoutContext: null, context: 0 },
      },
    },
    {
      type: 'MemoryRemembered',
      data: {
        turnNo: 1,
        toolCallId: 'm-1',
        memoryId: randomUUID(),
        scope: 'user',
        scopeId: 'u1',
        text: 'likes teal',
        importance: 0.5,
        expiresAt: null,
        updated: false,
        // Recorded before embeddings were kept: counts nothing.
        ...(withMemoryUsage ? { embedding: { model: 'EMB', tokens: 2, cost: 0.0002 } } : {}),
      },
    },
    {
      type: 'MemoriesRecalled',
      data: {
        turnNo: 1,
        auto: true,
        query: 'colour',
        hits: [],
        ...(withMemoryUsage ? { embedding: { model: 'EMB', tokens: 1, cost: 0.0001 } } : {}),
      },
    },
  ];
}

describe('migration to embedding usage', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let dataSource: DataSource;

  const migrate = async (direction: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await new EmbeddingUsage1732200025300()[direction](runner);
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
  /** A conversation of `owner` whose first turn made the embedding calls above. */
  const append = async (owner: string, withMemoryUsage: boolean) => {
    const id = randomUUID();
    const [started, ...rest] = conversationScript(id, { snapshot: snapshotFixture(), owner });
    await store.append(streamIdOf(id), toAppend([started, ...embeddingEvents(withMemoryUsage), ...rest]));
  };

  beforeAll(async () => {
    db = await createTestDatabase('embedding_usage_migration');
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

  it('counts the embedding calls of events projected before it, under the embedding model, and new events as they come', async () => {
    await migrate('down');
    await append('client-a', false);
    // The previous version's totals, without embeddings, and its checkpoint at the head.
    await pool.query(
      `insert into rm_usage_daily values (current_date, 'HELPDESK', 'ANSWER', 'SIM-CHAT', 1, 5, 100, 10, 0.01, 'client-a', 2, 1)`,
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
    await append('client-b', true);
    await project();
    const counted = await pool.query(
      `select subject, model_code, conversations::int, model_calls::int, embedding_tokens::int,
              embedding_cost::float8, estimated_cost::float8
       from rm_usage_daily order by 1, 2`,
    );
    const chat = { conversations: 1, model_calls: 5, embedding_tokens: 0, embedding_cost: 0 };
    expect(counted.rows).toEqual([
      // The old events: the retrieval's tokens and cost; the memory events carry none.
      {
        subject: 'client-a',
        model_code: 'EMB',
        conversations: 0,
        model_calls: 0,
        embedding_tokens: 7,
        embedding_cost: 0.0007,
        estimated_cost: 0.0007,
      },
      { subject: 'client-a', model_code: 'SIM-CHAT', ...chat, estimated_cost: expect.any(Number) },
      {
        subject: 'client-b',
        model_code: 'EMB',
        conversations: 0,
        model_calls: 0,
        embedding_tokens: 10,
        embedding_cost: 0.001,
        estimated_cost: 0.001,
      },
      { subject: 'client-b', model_code: 'SIM-CHAT', ...chat, estimated_cost: expect.any(Number) },
    ]);
    // Down again: the columns go, and usage is to be counted again without them.
    await migrate('down');
    expect((await pool.query('select count(*)::int as n from rm_usage_daily')).rows).toEqual([{ n: 0 }]);
    const columns = await pool.query(
      `select column_name from information_schema.columns where table_name = 'rm_usage_daily' and column_name like 'embedding%'`,
    );
    expect(columns.rows).toEqual([]);
    await migrate('up');
  });
});

import { createTestDatabase, startEmbeddedPostgresForTest } from '@parley/testing';
import { Pool } from 'pg';
import { ExactScanVectorStore } from '../exact-scan/exact-scan.vector-store';
import { GraphProcess } from '../graph/graph-process';
import { PgvectorVectorStore, hasPgvector } from '../pgvector/pgvector.vector-store';
import { CONTRACT_DIMENSIONS, describeVectorStoreContract } from './vector-store.contract';

/** PGlite with pgvector, as `npm start` runs it with nothing set (one connection, like its pool). */
async function embedded(
  make: (pool: Pool, worker: GraphProcess) => ExactScanVectorStore | PgvectorVectorStore,
  vector: boolean,
) {
  const pg = await startEmbeddedPostgresForTest();
  const pool = new Pool({ connectionString: pg.url, max: 1 });
  const worker = new GraphProcess();
  expect(await hasPgvector(pool)).toBe(vector);
  return {
    store: make(pool, worker),
    close: async () => {
      await worker.close();
      await pool.end();
      await pg.stop();
    },
  };
}

/** Every collection through an HNSW graph in process, each search waiting for it to be up to date. */
const everyCollectionGraphed = (worker: GraphProcess) => ({ worker, megabytes: 16, wait: true });

describeVectorStoreContract('pgvector (HNSW) on the embedded PGlite', () =>
  embedded((pool) => new PgvectorVectorStore(pool, CONTRACT_DIMENSIONS), true),
);

describeVectorStoreContract('pgvector on the embedded PGlite, small collections searched exactly', () =>
  embedded((pool) => new PgvectorVectorStore(pool, CONTRACT_DIMENSIONS, { exactBelow: 1_000_000 }), true),
);

describeVectorStoreContract('pgvector on the embedded PGlite, small collections ranked in process', () =>
  embedded((pool) => new PgvectorVectorStore(pool, CONTRACT_DIMENSIONS, { exactBelow: 1_000_000, cacheMb: 16 }), true),
);

describeVectorStoreContract(
  'pgvector on the embedded PGlite, collections searched through an HNSW graph in process',
  () =>
    embedded(
      (pool, worker) =>
        new PgvectorVectorStore(pool, CONTRACT_DIMENSIONS, { exactBelow: 1, graph: everyCollectionGraphed(worker) }),
      true,
    ),
);

describeVectorStoreContract('exact scan on the embedded PGlite', () =>
  embedded((pool) => new ExactScanVectorStore(pool, CONTRACT_DIMENSIONS), true),
);

describeVectorStoreContract('exact scan on PostgreSQL', async () => {
  const database = await createTestDatabase('vector_exact');
  const pool = new Pool({ connectionString: database.url, max: 2 });
  // This machine's PostgreSQL has no pgvector: the exact scan is what it gets.
  expect(await hasPgvector(pool)).toBe(false);
  return {
    store: new ExactScanVectorStore(pool, CONTRACT_DIMENSIONS),
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
});

describeVectorStoreContract('exact scan on PostgreSQL, collections ranked in process', async () => {
  const database = await createTestDatabase('vector_exact_kept');
  const pool = new Pool({ connectionString: database.url, max: 2 });
  return {
    store: new ExactScanVectorStore(pool, CONTRACT_DIMENSIONS, 16),
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
});

describeVectorStoreContract(
  'exact scan on PostgreSQL, collections searched through an HNSW graph in process',
  async () => {
    const database = await createTestDatabase('vector_exact_graph');
    const pool = new Pool({ connectionString: database.url, max: 2 });
    const worker = new GraphProcess();
    return {
      store: new ExactScanVectorStore(pool, CONTRACT_DIMENSIONS, 0, { ...everyCollectionGraphed(worker), above: 1 }),
      close: async () => {
        await worker.close();
        await pool.end();
        await database.drop();
      },
    };
  },
);

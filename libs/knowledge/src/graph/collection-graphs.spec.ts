import { createTestDatabase, startEmbeddedPostgresForTest, type TestDatabase } from '@parley/testing';
import { Pool } from 'pg';
import { bruteForce, randomVector, seeded } from '../contract/vector-store.contract';
import { ExactScanVectorStore } from '../exact-scan/exact-scan.vector-store';
import { PgvectorVectorStore, isEmbedded } from '../pgvector/pgvector.vector-store';
import type { Chunk, SearchQuery } from '../vector-store.port';
import { GraphProcess } from './graph-process';

const DIMS = 16;

const chunkOf = (collection: string, i: number, embedding: number[], part = i % 10): Chunk => ({
  id: `c${String(i).padStart(4, '0')}`,
  collection,
  documentId: `d${Math.floor(i / 10)}`,
  text: `chunk ${i}`,
  tokens: 2,
  metadata: { part },
  embedding,
});

const corpus = (collection: string, n: number, seed = 7) => {
  const next = seeded(seed);
  return Array.from({ length: n }, (_, i) => chunkOf(collection, i, randomVector(next, DIMS)));
};

/** Past the pause between two updates of a graph (MIN_REFRESH_MS), a search starts one; then it is done. */
async function caughtUp(
  store: { graphs: { search(q: SearchQuery): Promise<unknown>; settled(): Promise<void> } | null },
  query: SearchQuery,
) {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await store.graphs!.search(query);
  await store.graphs!.settled();
}

const idsOf = (hits: { chunk: { id: string } }[] | null) => hits?.map((h) => h.chunk.id) ?? null;

describe('CollectionGraphs: HNSW graphs in a process of their own over a store’s collections', () => {
  let database: TestDatabase;
  let pool: Pool;
  let worker: GraphProcess;
  let store: ExactScanVectorStore;
  /** Another process's store on the same table: its writes move the collection's version. */
  let other: ExactScanVectorStore;

  beforeAll(async () => {
    database = await createTestDatabase('vector_graphs');
    pool = new Pool({ connectionString: database.url, max: 2 });
    worker = new GraphProcess();
    store = new ExactScanVectorStore(pool, DIMS, 0, { worker, megabytes: 16, above: 100 });
    other = new ExactScanVectorStore(pool, DIMS);
    await store.init();
  });

  afterAll(async () => {
    await worker.close();
    await pool.end();
    await database.drop();
  });

  it('answers once the graph is built, with the exact scan’s top K and scores', async () => {
    const chunks = corpus('built', 600);
    await store.upsert(chunks);
    const next = seeded(11);
    const query: SearchQuery = { collection: 'built', vector: randomVector(next, DIMS), topK: 4 };
    // The first search starts the build and is answered without the graph.
    expect(await store.graphs!.search(query)).toBeNull();
    expect(idsOf(await store.search(query))).toEqual(bruteForce(chunks, query.vector, 4));
    await store.graphs!.settled();
    for (let i = 0; i < 20; i++) {
      const q = { ...query, vector: randomVector(next, DIMS) };
      const hits = await store.graphs!.search(q);
      expect(idsOf(hits)).toEqual(bruteForce(chunks, q.vector, 4));
      const exact = await other.search(q);
      hits!.forEach((hit, k) => expect(hit.score).toBeCloseTo(exact[k].score, 6));
    }
  });

  it('never answers for a version it has not read: another writer’s change waits for the update', async () => {
    const chunks = corpus('moving', 300, 3);
    await store.upsert(chunks);
    const probe = { collection: 'moving', vector: randomVector(seeded(5), DIMS), topK: 3 };
    await store.graphs!.search(probe);
    await store.graphs!.settled();
    expect(await store.graphs!.search(probe)).not.toBeNull();

    // Added elsewhere, right on the probe: the graph does not answer until it has linked it.
    await other.upsert([chunkOf('moving', 900, probe.vector)]);
    expect(await store.graphs!.search(probe)).toBeNull();
    expect(idsOf(await store.search(probe))![0]).toBe('c0900');
    await caughtUp(store, probe);
    expect(idsOf(await store.graphs!.search(probe))![0]).toBe('c0900');

    // An existing chunk's embedding replaced: found by its new vector once relinked.
    const moved = randomVector(seeded(99), DIMS);
    await other.upsert([{ ...chunks[17], embedding: moved }]);
    const byMoved = { ...probe, vector: moved, topK: 1 };
    expect(await store.graphs!.search(byMoved)).toBeNull();
    await caughtUp(store, byMoved);
    expect(idsOf(await store.graphs!.search(byMoved))).toEqual([chunks[17].id]);

    // Removed elsewhere: never returned again.
    await other.deleteDocument('moving', 'd90');
    const after = await store.search(probe);
    expect(idsOf(after)).not.toContain('c0900');
    expect(await store.graphs!.search(probe)).toBeNull();
    await caughtUp(store, probe);
    const graphed = await store.graphs!.search(probe);
    expect(graphed).not.toBeNull();
    expect(idsOf(graphed)).not.toContain('c0900');
    expect(idsOf(graphed)).toEqual(
      bruteForce(
        chunks.map((c, i) => (i === 17 ? { ...c, embedding: moved } : c)),
        probe.vector,
        3,
      ),
    );
  });

  it('leaves a filter that the candidates cannot fill to the store’s exact search', async () => {
    const chunks = corpus('filtered', 400, 21).map((c, i) => ({
      ...c,
      metadata: { part: i === 123 ? 'rare' : 'common' },
    }));
    await store.upsert(chunks);
    const query: SearchQuery = {
      collection: 'filtered',
      vector: randomVector(seeded(8), DIMS),
      topK: 2,
      filter: { part: 'rare' },
    };
    await store.graphs!.search(query);
    await store.graphs!.settled();
    expect(await store.graphs!.search({ ...query, filter: undefined })).not.toBeNull();
    const viaGraph = await store.graphs!.search(query);
    expect(viaGraph === null || idsOf(viaGraph)!.includes('c0123')).toBe(true);
    expect(idsOf(await store.search(query))).toEqual(['c0123']);
  });

  it('keeps no graph of a collection under `above` chunks, nor of one over the memory budget', async () => {
    await store.upsert(corpus('small', 50));
    const small = { collection: 'small', vector: randomVector(seeded(1), DIMS), topK: 4 };
    await store.graphs!.search(small);
    await store.graphs!.settled();
    expect(await store.graphs!.search(small)).toBeNull();
    expect(await store.search(small)).toHaveLength(4);

    const tight = new ExactScanVectorStore(pool, DIMS, 0, { worker, megabytes: 0.01, above: 100 });
    const large = { collection: 'built', vector: randomVector(seeded(2), DIMS), topK: 4 };
    await tight.graphs!.search(large);
    await tight.graphs!.settled();
    expect(await tight.graphs!.search(large)).toBeNull();
    expect(await tight.search(large)).toHaveLength(4);
  });

  it('builds its graphs again after their process died, and the server goes on', async () => {
    const query = { collection: 'built', vector: randomVector(seeded(4), DIMS), topK: 4 };
    await store.graphs!.search(query);
    await store.graphs!.settled();
    expect(await store.graphs!.search(query)).not.toBeNull();
    // As a fault in the native addon would end it.
    const pid = worker.pid!;
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; worker.pid === pid && waited < 5_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(worker.pid).toBeNull();
    expect(await store.graphs!.search(query)).toBeNull();
    expect(await store.search(query)).toHaveLength(4);
    await store.graphs!.settled();
    expect(idsOf(await store.graphs!.search(query))).toEqual(idsOf(await other.search(query)));
  });
});

describe('pgvector on the embedded PGlite with graphs', () => {
  it('reads pgvector’s binary vectors into the graph, answers as the exact search does, and builds no pgvector index', async () => {
    const pg = await startEmbeddedPostgresForTest();
    const pool = new Pool({ connectionString: pg.url, max: 1 });
    const worker = new GraphProcess();
    try {
      expect(await isEmbedded(pool)).toBe(true);
      const store = new PgvectorVectorStore(pool, DIMS, { exactBelow: 100, graph: { worker, megabytes: 16 } });
      await store.init();
      const chunks = corpus('docs', 500, 31);
      await store.upsert(chunks);
      const next = seeded(12);
      await store.graphs!.search({ collection: 'docs', vector: randomVector(next, DIMS), topK: 4 });
      await store.graphs!.settled();
      for (let i = 0; i < 10; i++) {
        const vector = randomVector(next, DIMS);
        expect(idsOf(await store.graphs!.search({ collection: 'docs', vector, topK: 4 }))).toEqual(
          bruteForce(chunks, vector, 4),
        );
      }
      const { rows } = await pool.query(`select 1 from pg_indexes where indexname = $1`, [`${store.table}_hnsw`]);
      expect(rows).toHaveLength(0);
    } finally {
      await worker.close();
      await pool.end();
      await pg.stop();
    }
  });

  it('tells the embedded database from a PostgreSQL server', async () => {
    const database = await createTestDatabase('vector_embedded');
    const pool = new Pool({ connectionString: database.url, max: 1 });
    try {
      expect(await isEmbedded(pool)).toBe(false);
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});

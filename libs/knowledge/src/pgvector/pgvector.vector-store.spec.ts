import { startEmbeddedPostgresForTest } from '@parley/testing';
import { Pool } from 'pg';
import type { Chunk } from '../vector-store.port';
import { PgvectorVectorStore } from './pgvector.vector-store';

const DIMENSIONS = 16;

/** A unit vector of seeded pseudo-random components: spread out, as an HNSW graph needs (clusters can leave it disconnected). */
function vectorOf(i: number): number[] {
  let a = (i + 1) * 2654435761;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const v = Array.from({ length: DIMENSIONS }, next);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const chunk = (i: number): Chunk => ({
  id: `c${i}`,
  collection: 'big',
  documentId: `d${i}`,
  text: `chunk ${i}`,
  tokens: 2,
  metadata: {},
  embedding: vectorOf(i),
});

describe('PgvectorVectorStore on PGlite: the HNSW index serves searches', () => {
  let pg: Awaited<ReturnType<typeof startEmbeddedPostgresForTest>>;
  // One connection, as the embedded database's pool has: the settings check reads the search's own session.
  let db: Pool;
  let store: PgvectorVectorStore;
  const plan = async () => {
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `explain select id from ${store.table} where collection = 'big' and metadata @> '{}'::jsonb
       order by embedding <=> '[${vectorOf(3).join(',')}]'::vector limit 4`,
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  };

  beforeAll(async () => {
    pg = await startEmbeddedPostgresForTest();
    db = new Pool({ connectionString: pg.url, max: 1 });
    store = new PgvectorVectorStore(db, DIMENSIONS, { efSearch: 64 });
    await store.init();
  });
  afterAll(async () => {
    await db.end();
    await pg.stop();
  });

  it('keeps the planner statistics current as chunks arrive, so a large collection is searched through the index', async () => {
    // Before any statistics a search would sort every row of the collection.
    for (let i = 0; i < 3000; i += 250) await store.upsert(Array.from({ length: 250 }, (_, j) => chunk(i + j)));
    expect(await plan()).toContain(`Index Scan using ${store.table}_hnsw`);
    // The index is approximate: which neighbours it returns is the contract suite's and the
    // benchmark's business; here, that it answers from the collection, best first, near the query.
    const hits = await store.search({ collection: 'big', vector: vectorOf(3), topK: 4 });
    expect(hits).toHaveLength(4);
    const scores = hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBeGreaterThan(0.6);
  });

  it('sets ef_search and the iterative scan for its own statement only', async () => {
    await store.search({ collection: 'big', vector: vectorOf(5), topK: 4 });
    const { rows } = await db.query<{ ef: string; scan: string }>(
      `select current_setting('hnsw.ef_search') as ef, current_setting('hnsw.iterative_scan') as scan`,
    );
    expect(rows[0]).toEqual({ ef: '40', scan: 'off' });
  });

  it('finds topK chunks of a small collection hidden among a large one (iterative scan past the first candidates)', async () => {
    await store.upsert(
      Array.from({ length: 5 }, (_, i) => ({ ...chunk(10_000 + i), collection: 'small', id: `s${i}` })),
    );
    const hits = await store.search({ collection: 'small', vector: vectorOf(10_000), topK: 4 });
    expect(hits.map((h) => h.chunk.id)).toHaveLength(4);
    expect(hits[0].chunk.id).toBe('s0');
  });
});

describe('PgvectorVectorStore on PGlite: small tables and collections go without the index', () => {
  let pg: Awaited<ReturnType<typeof startEmbeddedPostgresForTest>>;
  let db: Pool;
  let store: PgvectorVectorStore;
  const indexed = async () =>
    (await db.query(`select 1 from pg_indexes where indexname = $1`, [`${store.table}_hnsw`])).rows.length > 0;

  beforeAll(async () => {
    pg = await startEmbeddedPostgresForTest();
    db = new Pool({ connectionString: pg.url, max: 1 });
    store = new PgvectorVectorStore(db, DIMENSIONS, { exactBelow: 300 });
    await store.init();
  });
  afterAll(async () => {
    await db.end();
    await pg.stop();
  });

  it('builds the HNSW index once the table holds exactBelow chunks, and searches below it exactly', async () => {
    await store.upsert(Array.from({ length: 200 }, (_, i) => chunk(i)));
    expect(await indexed()).toBe(false);
    const hits = await store.search({ collection: 'big', vector: vectorOf(7), topK: 3, threshold: -1 });
    const exact = Array.from({ length: 200 }, (_, i) => ({
      id: `c${i}`,
      score: vectorOf(i).reduce((sum, x, d) => sum + x * vectorOf(7)[d], 0),
    })).sort((a, b) => b.score - a.score);
    expect(hits.map((h) => h.chunk.id)).toEqual(exact.slice(0, 3).map((h) => h.id));

    await store.upsert(Array.from({ length: 150 }, (_, i) => chunk(200 + i)));
    expect(await indexed()).toBe(true);
    const { rows } = await db.query<{ indexdef: string }>(`select indexdef from pg_indexes where indexname = $1`, [
      `${store.table}_hnsw`,
    ]);
    expect(rows[0].indexdef).toContain("m='16', ef_construction='64'");
  });
});

import { createTestDatabase, startEmbeddedPostgresForTest } from '@parley/testing';
import { Pool } from 'pg';
import { CONTRACT_DIMENSIONS, bruteForce, randomVector, seeded } from './contract/vector-store.contract';
import { EXACT_TABLE, ExactScanVectorStore } from './exact-scan/exact-scan.vector-store';
import { PgvectorVectorStore } from './pgvector/pgvector.vector-store';
import type { Chunk, MetadataValue, Queryable, VectorStore } from './vector-store.port';

/** A Queryable that keeps the statements sent through it. */
function counting(db: Queryable): Queryable & { sent: string[] } {
  const counted = {
    sent: [] as string[],
    query: <R>(sql: string, params?: unknown[]) => {
      counted.sent.push(sql);
      return db.query<R>(sql, params);
    },
  };
  return counted;
}

/** A statement that scores the chunks in SQL (either adapter's search there). */
const scoresInSql = (sql: string) => /unnest\(embedding|<=>/.test(sql);

const chunkOf = (collection: string, i: number, embedding: number[]): Chunk => ({
  id: `chunk-${String(i).padStart(4, '0')}`,
  collection,
  documentId: `doc-${i % 7}`,
  text: `text ${i}`,
  tokens: 2,
  metadata: { part: i % 3 },
  embedding,
});

const ids = (hits: { chunk: { id: string } }[]) => hits.map((h) => h.chunk.id);

/** The chunk table a store writes. */
const tableOf = (store: VectorStore) => (store instanceof PgvectorVectorStore ? store.table : EXACT_TABLE);

type Make = (db: Queryable, cacheMb: number) => VectorStore;

/**
 * Two stores over one database stand for two processes: what one writes, the other's kept
 * vectors must not hide.
 */
function describeKeptVectors(
  name: string,
  open: () => Promise<{ dbs: [Queryable, Queryable]; close: () => Promise<void> }>,
  make: Make,
) {
  describe(`collections ranked in process — ${name}`, () => {
    let dbs: [Queryable, Queryable];
    let close: () => Promise<void>;
    const next = seeded(17);

    beforeAll(async () => {
      ({ dbs, close } = await open());
      await make(dbs[0], 0).init();
    }, 60_000);
    afterAll(() => close());

    it("reads a collection once, then answers each search with one statement: the collection's version", async () => {
      const db = counting(dbs[0]);
      const store = make(db, 16);
      const collection = `kept-${Math.floor(next() * 1e9)}`;
      const chunks = Array.from({ length: 200 }, (_, i) => chunkOf(collection, i, randomVector(next)));
      await store.upsert(chunks);
      const vector = randomVector(next);
      expect(ids(await store.search({ collection, vector, topK: 4 }))).toEqual(bruteForce(chunks, vector, 4));
      const before = db.sent.length;
      for (let q = 0; q < 5; q++) {
        const query = randomVector(next);
        expect(ids(await store.search({ collection, vector: query, topK: 5, threshold: 0.1 }))).toEqual(
          bruteForce(chunks, query, 5, 0.1),
        );
      }
      const searches = db.sent.slice(before);
      expect(searches).toHaveLength(5);
      expect(searches.filter(scoresInSql)).toEqual([]);
      expect(searches.every((sql) => /^select coalesce\(\(select version from \w+_versions/.test(sql))).toBe(true);
    });

    it("sees another writer's upsert and delete at its next search", async () => {
      const reader = make(dbs[0], 16);
      const writer = make(dbs[1], 16);
      const collection = `shared-${Math.floor(next() * 1e9)}`;
      const chunks = Array.from({ length: 50 }, (_, i) => chunkOf(collection, i, randomVector(next)));
      await writer.upsert(chunks);
      const vector = randomVector(next);
      const [best] = ids(await reader.search({ collection, vector, topK: 1 }));
      expect(best).toBe(bruteForce(chunks, vector, 1)[0]);

      // The other process adds the query's own vector under a new id, and removes the old best.
      await writer.upsert([chunkOf(collection, 999, vector)]);
      await writer.pruneDocument(collection, chunks.find((c) => c.id === best)!.documentId, []);
      const hits = await reader.search({ collection, vector, topK: 3 });
      expect(hits[0].chunk.id).toBe('chunk-0999');
      expect(hits[0].score).toBeCloseTo(1, 5);
      const left = [...chunks.filter((c) => c.documentId !== chunks.find((x) => x.id === best)!.documentId)];
      expect(ids(hits)).toEqual(bruteForce([...left, chunkOf(collection, 999, vector)], vector, 3));
      expect(ids(hits)).not.toContain(best);

      await writer.deleteCollection(collection);
      expect(await reader.search({ collection, vector, topK: 3 })).toEqual([]);
    });

    it('sees a TRUNCATE of the table, even of a collection written before the table had versions', async () => {
      const reader = make(dbs[0], 16);
      const collection = `old-${Math.floor(next() * 1e9)}`;
      const chunks = Array.from({ length: 20 }, (_, i) => chunkOf(collection, i, randomVector(next)));
      await make(dbs[1], 0).upsert(chunks);
      // As if written before the versions: no row for it.
      await dbs[1].query(`delete from ${tableOf(reader)}_versions where collection = $1`, [collection]);
      const vector = randomVector(next);
      expect(await reader.search({ collection, vector, topK: 2 })).toHaveLength(2);
      await dbs[1].query(`truncate ${tableOf(reader)}`);
      expect(await reader.search({ collection, vector, topK: 2 })).toEqual([]);
    });

    it('filters on metadata as the SQL search does', async () => {
      const store = make(dbs[0], 16);
      const collection = `filtered-${Math.floor(next() * 1e9)}`;
      const chunks = Array.from({ length: 60 }, (_, i) => chunkOf(collection, i, randomVector(next)));
      await store.upsert(chunks);
      const vector = randomVector(next);
      const inSql = make(dbs[0], 0);
      const filters: Record<string, MetadataValue>[] = [{ part: 1 }, { part: 2, missing: null }, { part: '1' }];
      for (const filter of filters) {
        expect(ids(await store.search({ collection, vector, topK: 5, filter }))).toEqual(
          ids(await inSql.search({ collection, vector, topK: 5, filter })),
        );
      }
    });

    it('searches a collection larger than its budget in SQL, with the same answers', async () => {
      const db = counting(dbs[0]);
      const before = db.sent.length;
      // 0.01 MB: about 100 vectors of 16 dimensions with their ids.
      const store = make(db, 0.01);
      const collection = `large-${Math.floor(next() * 1e9)}`;
      const chunks = Array.from({ length: 300 }, (_, i) => chunkOf(collection, i, randomVector(next)));
      await store.upsert(chunks);
      for (let q = 0; q < 3; q++) {
        const vector = randomVector(next);
        expect(ids(await store.search({ collection, vector, topK: 4 }))).toEqual(bruteForce(chunks, vector, 4));
      }
      // Counted once, found too large, and then searched in SQL each time.
      expect(db.sent.slice(before).filter(scoresInSql)).toHaveLength(3);
    });
  });
}

/** Two pools on one database, standing for two processes; `close` ends them, then the database. */
function twoProcesses(url: string, max: number, drop: () => Promise<void>) {
  const pools: [Pool, Pool] = [new Pool({ connectionString: url, max }), new Pool({ connectionString: url, max })];
  return {
    dbs: pools,
    close: async () => {
      await Promise.all(pools.map((p) => p.end()));
      await drop();
    },
  };
}

describeKeptVectors(
  'exact scan on PostgreSQL',
  async () => {
    const database = await createTestDatabase('vector_kept');
    return twoProcesses(database.url, 2, () => database.drop());
  },
  (db, cacheMb) => new ExactScanVectorStore(db, CONTRACT_DIMENSIONS, cacheMb),
);

describeKeptVectors(
  'pgvector on the embedded PGlite, below VECTOR_EXACT_BELOW',
  async () => {
    const pg = await startEmbeddedPostgresForTest();
    return twoProcesses(pg.url, 1, () => pg.stop());
  },
  (db, cacheMb) => new PgvectorVectorStore(db, CONTRACT_DIMENSIONS, { exactBelow: 1_000_000, cacheMb }),
);

import { createTestDatabase, startEmbeddedPostgresForTest } from '@parley/testing';
import { Pool } from 'pg';
import { hasPgvector } from '../pgvector/pgvector.vector-store';
import type { Chunk } from '../vector-store.port';
import { VectorStoreResolver, type CollectionSource } from '../vector-store.resolver';
import { CollectionRemoval, type RemovedCollection } from './collection-removal';

const DIMENSIONS = 8;

const chunk = (collection: string, documentId: string, i: number): Chunk => ({
  id: `${documentId}#${i}`,
  collection,
  documentId,
  text: `chunk ${i} of ${documentId}`,
  tokens: 4,
  metadata: { chunkIndex: i },
  embedding: Array.from({ length: DIMENSIONS }, (_, d) => (d === i % DIMENSIONS ? 1 : 0.1)),
});

/** The removal against each store a collection may live in: pgvector on PGlite, the exact scan on PostgreSQL. */
describe.each([
  {
    name: 'pgvector on the embedded PGlite',
    type: 'PGV',
    open: async () => {
      const pg = await startEmbeddedPostgresForTest();
      const pool = new Pool({ connectionString: pg.url, max: 1 });
      expect(await hasPgvector(pool)).toBe(true);
      return { pool, table: `kn_vectors_${DIMENSIONS}`, close: () => pg.stop() };
    },
  },
  {
    name: 'the exact scan on PostgreSQL',
    type: 'SCAN',
    open: async () => {
      const database = await createTestDatabase('collection_removal');
      const pool = new Pool({ connectionString: database.url, max: 2 });
      return { pool, table: 'kn_chunks', close: () => database.drop() };
    },
  },
])('CollectionRemoval: a deleted collection’s chunks leave $name', ({ type, open }) => {
  let opened: Awaited<ReturnType<typeof open>>;
  let resolver: VectorStoreResolver;
  let removal: CollectionRemoval;
  const collection = (collectionName: string): RemovedCollection => ({
    code: collectionName.toUpperCase(),
    collectionName,
    store: { code: 'KB', type, connectionUrl: null },
  });
  const count = async (name: string, documentId?: string) =>
    (
      await opened.pool.query<{ n: number }>(
        `select count(*)::int as n from ${opened.table} where collection = $1 and ($2::text is null or document_id = $2)`,
        [name, documentId ?? null],
      )
    ).rows[0].n;

  beforeAll(async () => {
    opened = await open();
    const source: CollectionSource = { collection: async () => Promise.reject(new Error('not asked')) };
    resolver = new VectorStoreResolver(source, opened.pool);
    removal = new CollectionRemoval(resolver);
    const store = await resolver.storeFor(collection('x'), DIMENSIONS);
    await store.upsert([
      ...[0, 1, 2].map((i) => chunk('gone', 'a', i)),
      ...[0, 1].map((i) => chunk('gone', 'b', i)),
      ...[0, 1].map((i) => chunk('kept', 'a', i)),
      ...[0, 1].map((i) => chunk('shared', 'mine', i)),
      ...[0, 1, 2].map((i) => chunk('shared', 'theirs', i)),
    ]);
  }, 60_000);
  afterAll(async () => {
    await opened.pool.end();
    await opened.close();
  });

  it('removes every chunk under the name when no other collection uses it, and no other collection’s', async () => {
    const documents = [
      { documentId: 'a', dimensions: DIMENSIONS },
      { documentId: 'queued', dimensions: null },
    ];
    expect(await removal.purge(collection('gone'), documents, { shared: false })).toBe(5);
    expect(await count('gone')).toBe(0);
    expect(await count('kept')).toBe(2);
    const store = await resolver.storeFor(collection('gone'), DIMENSIONS);
    expect(await store.search({ collection: 'gone', vector: chunk('gone', 'a', 0).embedding, topK: 5 })).toEqual([]);
  });

  it('removes only its own documents’ chunks when another collection shares the name', async () => {
    const documents = [{ documentId: 'mine', dimensions: DIMENSIONS }];
    expect(await removal.purge(collection('shared'), documents, { shared: true })).toBe(2);
    expect(await count('shared', 'mine')).toBe(0);
    expect(await count('shared', 'theirs')).toBe(3);
  });

  it('does nothing for a collection none of whose documents stored chunks', async () => {
    expect(await removal.purge(collection('kept'), [{ documentId: 'a', dimensions: null }], { shared: false })).toBe(0);
    expect(await count('kept')).toBe(2);
  });
});

import { BreakerRegistry, EmbeddingClient } from '@parley/llm';
import { createTestDatabase, SIM_EMBEDDING_DIMENSIONS, startSimulator, type Simulator } from '@parley/testing';
import { Pool } from 'pg';
import { Collections } from './collections';
import { VectorStoreResolver, type CollectionSource, type DocumentCollectionConfig } from './vector-store.resolver';

const config = (code: string, threshold: number | null): DocumentCollectionConfig => ({
  code,
  collectionName: code.toLowerCase(),
  similarityThreshold: threshold,
  resultCount: 2,
  embeddingModel: { code: 'EMB', name: 'sim-embed', providerCode: 'SIM', inputTokenPrice: 0.25 },
  store: { code: 'KB', type: null, connectionUrl: null },
});

describe('Collections: embed with the collection model, search its store (simulator embeddings, PostgreSQL)', () => {
  let sim: Simulator;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Pool;
  let resolver: VectorStoreResolver;
  let collections: Collections;

  beforeAll(async () => {
    sim = await startSimulator();
    database = await createTestDatabase('knowledge_collections');
    pool = new Pool({ connectionString: database.url, max: 2 });
    const source: CollectionSource = {
      collection: async (code) => {
        if (code === 'FAQ') return config('FAQ', null);
        if (code === 'STRICT') return config('STRICT', 0.99);
        throw Object.assign(new Error(`Document collection '${code}' not found.`), { code: 'NOT_FOUND' });
      },
    };
    resolver = new VectorStoreResolver(source, pool);
    const endpoints = { endpointFor: async (code: string) => ({ code, baseUrl: sim.url, apiKey: 'sk-test' }) };
    const embeddings = new EmbeddingClient(new BreakerRegistry({ threshold: 5, halfOpenAfterMs: 1000 }), {
      baseDelayMs: 1,
    });
    collections = new Collections(source, resolver, embeddings, endpoints);
  });
  afterAll(async () => {
    await resolver.close();
    await pool.end();
    await database.drop();
    await sim.close();
  });

  it('embeds texts with the collection model and resolves its store for their length; the query finds the chunk sharing its words', async () => {
    const texts = [
      'Refunds for damaged goods are paid within 14 days.',
      'The office in Lisbon opens at nine.',
      'Passwords are rotated every quarter.',
    ];
    const embedded = await collections.embed('FAQ', texts);
    expect(embedded.vectors).toHaveLength(3);
    expect(embedded.collection.store.dimensions).toBe(SIM_EMBEDDING_DIMENSIONS);
    expect(embedded.spend).toMatchObject({ model: 'EMB', tokens: expect.any(Number) });
    expect(embedded.spend.cost).toBeCloseTo(embedded.spend.tokens * 0.25);
    const posts = sim.requests.filter((r) => r.path === '/v1/embeddings');
    expect((posts.at(-1)!.body as { model: string }).model).toBe('sim-embed');
    await embedded.collection.store.upsert(
      texts.map((text, i) => ({
        id: `d1:${i}`,
        collection: 'faq',
        documentId: 'd1',
        text,
        tokens: 10,
        metadata: {},
        embedding: embedded.vectors[i],
      })),
    );
    const found = await collections.search('FAQ', 'how are refunds for damaged goods paid');
    expect(found.hits.map((h) => h.chunk.id)).toHaveLength(2);
    expect(found.hits[0].chunk.id).toBe('d1:0');
    expect(found.hits[0].score).toBeGreaterThan(found.hits[1].score);
    expect(found.searchMs).toBeGreaterThanOrEqual(0);
    // The collection's own threshold holds unless the caller gives another.
    expect((await collections.search('STRICT', 'how are refunds for damaged goods paid')).hits).toEqual([]);
    expect((await collections.search('FAQ', 'refunds', { topK: 1 })).hits).toHaveLength(1);
  });

  it('refuses nothing to embed, and passes on an unknown collection', async () => {
    await expect(collections.embed('FAQ', [])).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(collections.search('NOPE', 'anything')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

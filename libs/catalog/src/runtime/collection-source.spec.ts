import { ExactScanVectorStore, VectorStoreResolver } from '@parley/knowledge';
import { Pool } from 'pg';
import { CatalogService } from '../apply/catalog.service';
import { openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { CatalogReader } from '../store/catalog-reader';
import { CatalogCollectionSource } from './collection-source';

describe('document collection → vector store → adapter (catalog, PostgreSQL without pgvector)', () => {
  let t: CatalogTestDb;
  let pool: Pool;
  let resolver: VectorStoreResolver;

  beforeAll(async () => {
    t = await openCatalogDb('catalog_collections');
    await new CatalogService(t.dataSource, testCipher()).apply(
      {
        providers: [{ code: 'SIM', providerType: 'openai-compatible', baseUrl: 'http://127.0.0.1:4010/v1' }],
        models: [
          {
            code: 'EMB',
            llmModelName: 'sim-embed',
            llmProvider: 'SIM',
            modelType: 'embedding',
            llmInputTokenPrice: 0.5,
          },
          { code: 'EMB2', llmModelName: 'sim-embed-2', llmProvider: 'SIM', modelType: 'embedding' },
        ],
        vectorStoreTypes: [
          { code: 'PGV', description: 'pgvector' },
          { code: 'SCAN', description: 'Exact scan' },
        ],
        vectorStores: [
          { code: 'KB', description: 'Knowledge base', llmEmbeddingModel: 'EMB' },
          { code: 'KBPGV', description: 'Wants pgvector', llmVectorStoreType: 'PGV', llmEmbeddingModel: 'EMB' },
        ],
        documentCollections: [
          { code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.7, llmResultCount: 6 },
          { code: 'POLICY', llmVectorStore: 'KB', collectionName: 'policies', llmEmbeddingModel: 'EMB2' },
          { code: 'HNSW', llmVectorStore: 'KBPGV', collectionName: 'hnsw' },
        ],
      },
      { dryRun: false },
    );
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    resolver = new VectorStoreResolver(
      new CatalogCollectionSource(new CatalogReader(t.dataSource, testCipher())),
      pool,
    );
  });
  afterAll(async () => {
    await resolver.close();
    await pool.end();
    await t.close();
  });

  it('gives a collection its store (the exact scan here), its name, top-K and threshold', async () => {
    const faq = await resolver.resolve('FAQ', 8);
    expect(faq.store).toBeInstanceOf(ExactScanVectorStore);
    expect(faq.store.dimensions).toBe(8);
    expect(faq.config.collectionName).toBe('faq');
    expect(faq).toMatchObject({ topK: 6, threshold: 0.7 });
    // The store's embedding model, unless the collection names its own.
    expect(faq.config.embeddingModel).toEqual({
      code: 'EMB',
      name: 'sim-embed',
      providerCode: 'SIM',
      inputTokenPrice: 0.5,
    });
    const policy = await resolver.resolve('POLICY', 8);
    expect(policy).toMatchObject({ topK: 4, threshold: undefined });
    expect(policy.config.embeddingModel).toMatchObject({ code: 'EMB2', name: 'sim-embed-2', inputTokenPrice: 0 });
    expect(policy.store).toBe(faq.store);
  });

  it('answers NOT_FOUND for an unknown collection, and VALIDATION_FAILED for pgvector on a database without it', async () => {
    await expect(resolver.resolve('NOPE', 8)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(resolver.resolve('HNSW', 8)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/pgvector/),
    });
  });

  it('refuses, at apply, a collection with no embedding model and a chat model named to embed; nothing is written', async () => {
    const service = new CatalogService(t.dataSource, testCipher());
    const refused = service.apply(
      {
        models: [{ code: 'CHAT', llmModelName: 'sim-chat', llmProvider: 'SIM' }],
        vectorStores: [
          { code: 'BARE', description: 'No model' },
          { code: 'WRONG', description: 'Chat model', llmEmbeddingModel: 'CHAT' },
        ],
        documentCollections: [
          { code: 'NOMODEL', llmVectorStore: 'BARE', collectionName: 'none' },
          { code: 'OWNCHAT', llmVectorStore: 'KB', collectionName: 'c', llmEmbeddingModel: 'CHAT' },
          { code: 'OWNEMB', llmVectorStore: 'BARE', collectionName: 'ok', llmEmbeddingModel: 'EMB' },
        ],
      },
      { dryRun: false },
    );
    await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const problems = (
      (await refused.catch((e: { details: { problems: unknown[] } }) => e)) as {
        details: { problems: { path: string; message: string }[] };
      }
    ).details.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        {
          path: 'vectorStores[1].llmEmbeddingModel',
          message: "'CHAT' is not an embedding model (modelType: inference)",
        },
        {
          path: 'documentCollections[0].llmEmbeddingModel',
          message: "required: neither the collection nor its vector store 'BARE' names an embedding model",
        },
        {
          path: 'documentCollections[1].llmEmbeddingModel',
          message: "'CHAT' is not an embedding model (modelType: inference)",
        },
      ]),
    );
    expect(problems.some((p) => p.path.startsWith('documentCollections[2]'))).toBe(false);
    await expect(resolver.resolve('OWNEMB', 8)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

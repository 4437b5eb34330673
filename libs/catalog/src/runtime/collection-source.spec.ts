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
        vectorStoreTypes: [
          { code: 'PGV', description: 'pgvector' },
          { code: 'SCAN', description: 'Exact scan' },
        ],
        vectorStores: [
          { code: 'KB', description: 'Knowledge base' },
          { code: 'KBPGV', description: 'Wants pgvector', llmVectorStoreType: 'PGV' },
        ],
        documentCollections: [
          { code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.7, llmResultCount: 6 },
          { code: 'POLICY', llmVectorStore: 'KB', collectionName: 'policies' },
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
    const policy = await resolver.resolve('POLICY', 8);
    expect(policy).toMatchObject({ topK: 4, threshold: undefined });
    expect(policy.store).toBe(faq.store);
  });

  it('answers NOT_FOUND for an unknown collection, and VALIDATION_FAILED for pgvector on a database without it', async () => {
    await expect(resolver.resolve('NOPE', 8)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(resolver.resolve('HNSW', 8)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/pgvector/),
    });
  });
});

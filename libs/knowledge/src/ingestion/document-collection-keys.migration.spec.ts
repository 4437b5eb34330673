import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { DocumentCollectionKeys1732200025600 } from '../../../../migrations/1732200025600-document-collection-keys';

describe('migration to document rows keyed by their catalog collection', () => {
  let db: TestDatabase;
  let pool: Pool;
  let dataSource: DataSource;

  const migrate = async (direction: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await new DocumentCollectionKeys1732200025600()[direction](runner);
    } finally {
      await runner.release();
    }
  };
  const document = (collection: string, id: string) =>
    pool.query(
      `insert into kn_documents (collection, document_id, title, media_type, bytes, status, revision, ingested_by)
       values ($1, $2, $3, 'text/plain', 1, 'ready', gen_random_uuid(), 'admin')`,
      [collection, id, id],
    );
  const chunk = (collection: string, id: string) =>
    pool.query(
      `insert into kn_chunks (collection, id, document_id, text, tokens, embedding, norm)
       values ($1, $2, 'd', 't', 1, '{1,0}', 1)`,
      [collection, id],
    );
  const ids = async (sql: string) => (await pool.query<{ id: string }>(sql)).rows.map((r) => r.id).sort();

  beforeAll(async () => {
    db = await createTestDatabase('document_collection_keys');
    pool = new Pool({ connectionString: db.url, max: 2 });
    dataSource = await new DataSource({ type: 'postgres', url: db.url }).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await pool.end();
    await db.drop();
  });

  it('removes what collections deleted before left, then ties documents to their collection', async () => {
    await migrate('down');
    await pool.query(`insert into cat_vector_stores (code, description) values ('KB', 'kb')`);
    await pool.query(
      `insert into cat_document_collections (code, description, llm_vector_store, collection_name)
       values ('FAQ', 'faq', 'KB', 'faq')`,
    );
    await document('FAQ', 'kept');
    await document('OLD', 'orphan');
    await pool.query(
      `insert into kn_document_texts (revision, collection, document_id, text) values (gen_random_uuid(), 'OLD', 'orphan', 'x')`,
    );
    await chunk('faq', 'kept#0');
    await chunk('old', 'orphan#0');

    await migrate('up');
    expect(await ids(`select collection || '/' || document_id as id from kn_documents`)).toEqual(['FAQ/kept']);
    expect(await ids(`select document_id as id from kn_document_texts`)).toEqual([]);
    expect(await ids(`select id from kn_chunks`)).toEqual(['kept#0']);
    // A document of no collection is refused; deleting the collection takes its documents along.
    await expect(document('OLD', 'again')).rejects.toMatchObject({ code: '23503' });
    await pool.query(`delete from cat_document_collections where code = 'FAQ'`);
    expect(await ids(`select document_id as id from kn_documents`)).toEqual([]);
  });
});

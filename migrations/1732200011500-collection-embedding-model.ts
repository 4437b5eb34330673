import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The embedding model of a vector store's collections, and a collection's own when it differs:
 * ingestion embeds chunks and retrieval embeds queries with it.
 */
export class CollectionEmbeddingModel1732200011500 implements MigrationInterface {
  name = 'CollectionEmbeddingModel1732200011500';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['cat_vector_stores', 'cat_document_collections']) {
      await q.query(`alter table ${table} add column llm_embedding_model varchar(12) references cat_models`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['cat_vector_stores', 'cat_document_collections']) {
      await q.query(`alter table ${table} drop column llm_embedding_model`);
    }
  }
}

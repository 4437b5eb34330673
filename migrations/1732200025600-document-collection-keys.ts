import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A document collection's documents belong to it: kn_documents and kn_document_texts get a
 * foreign key to cat_document_collections that cascades, so deleting a collection from the
 * catalog removes its documents' rows and waiting texts in the same transaction (its chunks are
 * removed from the vector store by CollectionRemoval), and no document can be added to a
 * collection that is gone. Rows of collections deleted before are removed first, and so are the
 * chunks in Parley's own database kept under a name no collection of the catalog uses any more.
 */
export class DocumentCollectionKeys1732200025600 implements MigrationInterface {
  name = 'DocumentCollectionKeys1732200025600';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['kn_document_texts', 'kn_documents']) {
      await q.query(
        `delete from ${table} t where not exists (select 1 from cat_document_collections c where c.code = t.collection)`,
      );
      await q.query(
        `alter table ${table} add constraint ${table}_collection_fkey
           foreign key (collection) references cat_document_collections (code) on delete cascade`,
      );
    }
    // The exact scan's table, and pgvector's (one per embedding length, made at first use).
    const tables: { table_name: string }[] = await q.query(
      `select table_name from information_schema.tables
       where table_schema = current_schema() and (table_name = 'kn_chunks' or table_name ~ '^kn_vectors_[0-9]+$')`,
    );
    for (const { table_name } of tables) {
      await q.query(
        `delete from ${table_name} k
         where not exists (select 1 from cat_document_collections c where c.collection_name = k.collection)`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['kn_documents', 'kn_document_texts'])
      await q.query(`alter table ${table} drop constraint ${table}_collection_fkey`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The documents of each collection, as ingestion keeps them: one row per document (its title,
 * metadata, source file, status, counts, who ingested it) and, while its ingestion job waits or
 * runs, the extracted text the job chunks (jobs carry only ids).
 */
export class DocumentIngestion1732200012000 implements MigrationInterface {
  name = 'DocumentIngestion1732200012000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `create table kn_documents (
         collection varchar(8) not null,
         document_id varchar(200) not null,
         title text not null,
         metadata jsonb not null default '{}',
         source_name text,
         media_type text not null,
         bytes integer not null,
         status varchar(10) not null check (status in ('queued', 'ingesting', 'ready', 'failed')),
         error text,
         revision uuid not null,
         chunk_count integer not null default 0,
         token_count integer not null default 0,
         dimensions integer,
         ingested_by text not null,
         created_at timestamptz not null default now(),
         updated_at timestamptz not null default now(),
         primary key (collection, document_id))`,
    );
    await q.query(
      `create table kn_document_texts (
         revision uuid primary key,
         collection varchar(8) not null,
         document_id varchar(200) not null,
         text text not null,
         created_at timestamptz not null default now())`,
    );
    await q.query(`create index kn_document_texts_document on kn_document_texts (collection, document_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists kn_document_texts');
    await q.query('drop table if exists kn_documents');
  }
}

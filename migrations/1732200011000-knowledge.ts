import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The knowledge lib's chunk store for the exact scan (embeddings as `real[]`), and the pgvector
 * extension where the database offers it (the embedded PGlite does; a PostgreSQL without it
 * keeps to the exact scan). pgvector's tables (`kn_vectors_<n>`, one per embedding length) are
 * created by the store at first use, as their `vector(n)` needs the model's length.
 */
export class Knowledge1732200011000 implements MigrationInterface {
  name = 'Knowledge1732200011000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `create table if not exists kn_chunks (
         collection text not null,
         id text not null,
         document_id text not null,
         text text not null,
         tokens integer not null,
         metadata jsonb not null default '{}',
         embedding real[] not null,
         norm double precision not null,
         created_at timestamptz not null default now(),
         primary key (collection, id))`,
    );
    await q.query(`create index if not exists kn_chunks_document on kn_chunks (collection, document_id)`);
    const available = await q.query(`select 1 from pg_available_extensions where name = 'vector'`);
    if (available.length > 0) await q.query('create extension if not exists vector');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists kn_chunks');
  }
}

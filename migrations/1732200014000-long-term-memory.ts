import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Long-term memory (libs/knowledge MemoryStore): facts per owner and scope, with their embedding
 * as float32 bytes for an exact scan, importance and expiry. One fact per text and scope (md5 of
 * the text, so a long fact fits the index). An action's switches: `longTermMemory` (the remember
 * and recall tools) and `autoRecall` (a recall before each turn's first model call).
 */
export class LongTermMemory1732200014000 implements MigrationInterface {
  name = 'LongTermMemory1732200014000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions add column if not exists long_term_memory boolean not null default false');
    await q.query('alter table cat_actions add column if not exists auto_recall boolean not null default false');
    await q.query(
      `create table if not exists kn_memories (
         id uuid primary key,
         owner text not null,
         scope text not null,
         scope_id text not null,
         text text not null,
         importance double precision not null,
         expires_at timestamptz,
         embedding bytea not null,
         dimensions integer not null,
         norm double precision not null,
         metadata jsonb not null default '{}',
         created_at timestamptz not null default now(),
         updated_at timestamptz not null default now())`,
    );
    await q.query(
      'create unique index if not exists kn_memories_fact on kn_memories (owner, scope, scope_id, md5(text))',
    );
    await q.query('create index if not exists kn_memories_subject on kn_memories (owner, scope, scope_id, created_at)');
    await q.query(
      'create index if not exists kn_memories_expiry on kn_memories (expires_at) where expires_at is not null',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists kn_memories');
    await q.query('alter table cat_actions drop column if exists long_term_memory');
    await q.query('alter table cat_actions drop column if exists auto_recall');
  }
}

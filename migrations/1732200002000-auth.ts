import type { MigrationInterface, QueryRunner } from 'typeorm';

/** API keys: only a sha-256 digest of each key is stored; the key itself is shown once. */
export class Auth1732200002000 implements MigrationInterface {
  name = 'Auth1732200002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table auth_api_keys (
        id uuid primary key,
        subject text not null,
        roles text[] not null,
        name text not null,
        hash text not null unique,
        created_at timestamptz not null default now(),
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`create index auth_api_keys_subject on auth_api_keys (subject)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table auth_api_keys`);
  }
}

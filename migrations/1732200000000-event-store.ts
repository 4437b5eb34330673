import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The event-store tables of EVENT-STORE.md. */
export class EventStore1732200000000 implements MigrationInterface {
  name = 'EventStore1732200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table es_streams (
        stream_id text primary key,
        category text not null,
        version bigint not null default -1,
        status smallint not null default 0,
        truncate_before bigint,
        max_count bigint,
        max_age interval,
        metadata jsonb,
        last_hash text
      )`);
    await q.query(`
      create table es_events (
        global_position bigint generated always as identity primary key,
        transaction_id xid8 not null default pg_current_xact_id(),
        stream_id text not null,
        category text not null,
        revision bigint not null,
        event_id uuid not null,
        event_type text not null,
        schema_version int not null,
        data jsonb not null,
        metadata jsonb not null,
        created_at timestamptz not null default now(),
        prev_hash text not null,
        hash text not null,
        unique (stream_id, revision),
        unique (stream_id, event_id)
      )`);
    await q.query(`create index es_events_tx_pos on es_events (transaction_id, global_position)`);
    await q.query(`create index es_events_cat_tx_pos on es_events (category, transaction_id, global_position)`);
    await q.query(`
      create table es_checkpoints (
        subscription_id text primary key,
        last_tx xid8,
        last_position bigint,
        updated_at timestamptz not null default now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table es_checkpoints`);
    await q.query(`drop table es_events`);
    await q.query(`drop table es_streams`);
  }
}

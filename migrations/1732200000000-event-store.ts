import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event-store tables (docs/event-store.md), plus `es_append`: the whole append (lock the
 * stream, idempotency, expected state, hash chain, insert, version bump) as one statement, so
 * an append costs one round trip. Errors are raised with SQLSTATE class PX and mapped to typed
 * errors by the adapter; raising rolls the statement back, so a refused append writes nothing.
 */
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
    // position: the opaque position string (either adapter); last_tx/last_position: its parts
    // for PostgreSQL positions, so SQL-side readers can use them.
    await q.query(`
      create table es_checkpoints (
        subscription_id text primary key,
        position text,
        last_tx xid8,
        last_position bigint,
        updated_at timestamptz not null default now()
      )`);
    await q.query(APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop function es_append`);
    await q.query(`drop table es_checkpoints`);
    await q.query(`drop table es_events`);
    await q.query(`drop table es_streams`);
  }
}

// p_expected_kind: 0 any, 1 no_stream, 2 stream_exists, 3 exact revision (p_expected).
// The hash input is built from JSON texts the adapter canonicalised, so the adapter can
// recompute it byte for byte when verifying.
export const APPEND_FUNCTION = `
create function es_append(
  p_stream text, p_category text, p_expected_kind int, p_expected bigint, p_stream_json text,
  p_ids uuid[], p_types text[], p_type_json text[], p_versions int[], p_data text[], p_metadata text[])
returns table (next_revision bigint, tx text, last_position bigint)
language plpgsql as $fn$
declare
  v_version bigint; v_status smallint; v_hash text; v_tb bigint; v_exists boolean;
  v_n int := cardinality(p_ids);
  v_seen uuid[]; v_first bigint; v_last bigint;
  v_prevs text[] := '{}'; v_hashes text[] := '{}'; v_pos bigint;
begin
  select s.version, s.status, s.last_hash, s.truncate_before into v_version, v_status, v_hash, v_tb
    from es_streams s where s.stream_id = p_stream for update;
  if not found then
    insert into es_streams (stream_id, category) values (p_stream, p_category) on conflict do nothing;
    select s.version, s.status, s.last_hash, s.truncate_before into v_version, v_status, v_hash, v_tb
      from es_streams s where s.stream_id = p_stream for update;
  end if;
  if v_status = 2 then
    raise exception using errcode = 'PX001', message = 'stream is tombstoned';
  end if;

  select array_agg(e.event_id order by e.revision), min(e.revision), max(e.revision) into v_seen, v_first, v_last
    from es_events e where e.stream_id = p_stream and e.event_id = any(p_ids);
  if v_seen is not null then
    if v_seen = p_ids and v_last - v_first = v_n - 1 and (p_expected_kind in (0, 2)
        or (p_expected_kind = 1 and v_first = coalesce(v_tb, 0))
        or (p_expected_kind = 3 and v_first = p_expected + 1)) then
      return query select v_last, e.transaction_id::text, e.global_position
        from es_events e where e.stream_id = p_stream and e.revision = v_last;
      return;
    end if;
    raise exception using errcode = 'PX002', message = 'event ids already used', detail = array_to_string(v_seen, ',');
  end if;

  v_exists := v_version >= 0 and v_status = 0;
  if (p_expected_kind = 1 and v_exists) or (p_expected_kind = 2 and not v_exists)
      or (p_expected_kind = 3 and (not v_exists or v_version <> p_expected)) then
    raise exception using errcode = 'PX003', message = 'wrong expected version',
      detail = case when v_exists then v_version::text else 'no_stream' end;
  end if;

  v_hash := coalesce(v_hash, repeat('0', 64));
  for i in 1 .. v_n loop
    v_prevs[i] := v_hash;
    v_hash := encode(sha256(convert_to(v_hash || '{"data":' || p_data[i] || ',"eventId":"' || p_ids[i]::text
      || '","metadata":' || p_metadata[i] || ',"revision":' || (v_version + i)::text
      || ',"schemaVersion":' || p_versions[i]::text || ',"streamId":' || p_stream_json
      || ',"type":' || p_type_json[i] || '}', 'UTF8')), 'hex');
    v_hashes[i] := v_hash;
  end loop;

  with ins as (
    insert into es_events (stream_id, category, revision, event_id, event_type, schema_version, data, metadata, prev_hash, hash)
    select p_stream, p_category, v_version + t.ord, t.id, t.typ, t.ver, t.d::jsonb, t.m::jsonb, t.prev, t.h
      from unnest(p_ids, p_types, p_versions, p_data, p_metadata, v_prevs, v_hashes)
        with ordinality as t(id, typ, ver, d, m, prev, h, ord)
      order by t.ord
    returning global_position)
  select max(global_position) into v_pos from ins;

  update es_streams set version = v_version + v_n, status = 0, last_hash = v_hash where stream_id = p_stream;
  return query select v_version + v_n, pg_current_xact_id()::text, v_pos;
end
$fn$`;

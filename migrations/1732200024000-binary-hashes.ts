import type { MigrationInterface, QueryRunner } from 'typeorm';
import { keyedAppendFunction } from './1732200009100-keyed-hash-chain';

/**
 * The hash chain is stored as bytes instead of hex text: `es_events.prev_hash`, `es_events.hash`
 * and `es_streams.last_hash` become bytea, 33 bytes on disk instead of 65 each (34 for a keyed
 * hash). Outside the tables nothing changes: `es_hash_text` gives back the very text every reader
 * returned before (`<hex>`, or `hmac:<hex>` for a keyed hash) and the hash input of es_append is
 * that same text, so every hash stays what it was and verifies as before.
 *
 * Stored form: a plain sha-256 is its 32 bytes; a keyed one is the byte 0x01 and its 32 bytes.
 */
export class BinaryHashes1732200024000 implements MigrationInterface {
  name = 'BinaryHashes1732200024000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(HASH_FUNCTIONS);
    await q.query(`alter table es_events
      alter column prev_hash type bytea using es_hash_bytes(prev_hash),
      alter column hash type bytea using es_hash_bytes(hash)`);
    await q.query(`alter table es_streams alter column last_hash type bytea using es_hash_bytes(last_hash)`);
    await q.query(BINARY_APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table es_events
      alter column prev_hash type text using es_hash_text(prev_hash),
      alter column hash type text using es_hash_text(hash)`);
    await q.query(`alter table es_streams alter column last_hash type text using es_hash_text(last_hash)`);
    await q.query(keyedAppendFunction().replace('create function', 'create or replace function'));
    await q.query(`drop function es_hash_text(bytea)`);
    await q.query(`drop function es_hash_bytes(text)`);
  }
}

// Single-expression SQL functions, not strict (null gives null all the same), so the planner
// inlines them into the statements that read hashes.
const HASH_FUNCTIONS = `
create function es_hash_bytes(h text) returns bytea
language sql immutable parallel safe as $$
  select case when h like 'hmac:%' then '\\x01'::bytea || decode(substr(h, 6), 'hex') else decode(h, 'hex') end
$$;
create function es_hash_text(h bytea) returns text
language sql immutable parallel safe as $$
  select case when length(h) = 33 and get_byte(h, 0) = 1 then 'hmac:' || encode(substr(h, 2), 'hex')
    else encode(h, 'hex') end
$$`;

// es_append of …-keyed-hash-chain, storing the digests as bytes; the hash input is unchanged
// (the previous hash as text, then the canonical event).
export const BINARY_APPEND_FUNCTION = `
create or replace function es_append(
  p_stream text, p_category text, p_expected_kind int, p_expected bigint, p_stream_json text,
  p_ids uuid[], p_types text[], p_type_json text[], p_versions int[], p_data text[], p_metadata text[],
  p_hmac_inner bytea, p_hmac_outer bytea)
returns table (next_revision bigint, tx text, last_position bigint)
language plpgsql as $fn$
declare
  v_version bigint; v_status smallint; v_last bytea; v_tb bigint; v_exists boolean;
  v_n int := cardinality(p_ids);
  v_seen uuid[]; v_first bigint; v_last_rev bigint;
  v_prevs bytea[] := '{}'; v_hashes bytea[] := '{}'; v_pos bigint;
  v_hash text; v_input bytea; v_digest bytea;
begin
  select s.version, s.status, s.last_hash, s.truncate_before into v_version, v_status, v_last, v_tb
    from es_streams s where s.stream_id = p_stream for update;
  if not found then
    insert into es_streams (stream_id, category) values (p_stream, p_category) on conflict do nothing;
    select s.version, s.status, s.last_hash, s.truncate_before into v_version, v_status, v_last, v_tb
      from es_streams s where s.stream_id = p_stream for update;
  end if;
  if v_status = 2 then
    raise exception using errcode = 'PX001', message = 'stream is tombstoned';
  end if;

  select array_agg(e.event_id order by e.revision), min(e.revision), max(e.revision) into v_seen, v_first, v_last_rev
    from es_events e where e.stream_id = p_stream and e.event_id = any(p_ids);
  if v_seen is not null then
    if v_seen = p_ids and v_last_rev - v_first = v_n - 1 and (p_expected_kind in (0, 2)
        or (p_expected_kind = 1 and v_first = coalesce(v_tb, 0))
        or (p_expected_kind = 3 and v_first = p_expected + 1)) then
      return query select v_last_rev, e.transaction_id::text, e.global_position
        from es_events e where e.stream_id = p_stream and e.revision = v_last_rev;
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

  v_last := coalesce(v_last, decode(repeat('00', 32), 'hex'));
  v_hash := es_hash_text(v_last);
  for i in 1 .. v_n loop
    v_prevs[i] := v_last;
    v_input := convert_to(v_hash || '{"data":' || p_data[i] || ',"eventId":"' || p_ids[i]::text
      || '","metadata":' || p_metadata[i] || ',"revision":' || (v_version + i)::text
      || ',"schemaVersion":' || p_versions[i]::text || ',"streamId":' || p_stream_json
      || ',"type":' || p_type_json[i] || '}', 'UTF8');
    if p_hmac_inner is null then
      v_digest := sha256(v_input);
      v_last := v_digest;
      v_hash := encode(v_digest, 'hex');
    else
      v_digest := sha256(p_hmac_outer || sha256(p_hmac_inner || v_input));
      v_last := '\\x01'::bytea || v_digest;
      v_hash := 'hmac:' || encode(v_digest, 'hex');
    end if;
    v_hashes[i] := v_last;
  end loop;

  with ins as (
    insert into es_events (stream_id, category, revision, event_id, event_type, schema_version, data, metadata, prev_hash, hash)
    select p_stream, p_category, v_version + t.ord, t.id, t.typ, t.ver, t.d::jsonb, t.m::jsonb, t.prev, t.h
      from unnest(p_ids, p_types, p_versions, p_data, p_metadata, v_prevs, v_hashes)
        with ordinality as t(id, typ, ver, d, m, prev, h, ord)
      order by t.ord
    returning global_position)
  select max(global_position) into v_pos from ins;

  update es_streams set version = v_version + v_n, status = 0, last_hash = v_last where stream_id = p_stream;
  return query select v_version + v_n, pg_current_xact_id()::text, v_pos;
end
$fn$`;

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { BINARY_APPEND_FUNCTION } from './1732200024000-binary-hashes';

/**
 * es_append finds reused event ids in time that does not grow with the stream. Its check for
 * them (`event_id = any(p_ids)`) was planned once per connection as a generic plan, which could
 * take the unique (stream_id, event_id) index by its first column only and test every event of
 * the stream against the ids: on a new database, two-event appends to a stream of 10,000 events
 * ran at 384/s against 1,008 to a new one (`npm run bench:event-store`). Now each id is probed by both columns, and the array query runs only when one of
 * them is there (a retried append, or ids used twice), so what the function returns and raises
 * is unchanged.
 */
export class AppendIdProbe1732200026000 implements MigrationInterface {
  name = 'AppendIdProbe1732200026000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(PROBING_APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(BINARY_APPEND_FUNCTION);
  }
}

// es_append of …-binary-hashes, with the ids probed one by one before the array query.
const PROBING_APPEND_FUNCTION = `
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

  -- Each id is looked up on its own, by both columns of the unique (stream_id, event_id) index:
  -- with event_id = any(p_ids) the cached generic plan could take the index on stream_id alone
  -- and filter every event of the stream, an append growing with the stream's length.
  for i in 1 .. v_n loop
    if exists (select 1 from es_events e where e.stream_id = p_stream and e.event_id = p_ids[i]) then
      select array_agg(e.event_id order by e.revision), min(e.revision), max(e.revision) into v_seen, v_first, v_last_rev
        from es_events e where e.stream_id = p_stream and e.event_id = any(p_ids);
      exit;
    end if;
  end loop;
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

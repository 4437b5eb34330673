/**
 * The statements the PostgreSQL adapter issues, in one place: the benchmark's baseline issues
 * the very same text through a bare `pg` client. Each is run as a named prepared statement.
 */

/** The whole append in one statement (see migrations/1732200000000-event-store.ts, …-keyed-hash-chain.ts, …-binary-hashes.ts). */
export const APPEND_SQL =
  'select next_revision, tx, last_position from es_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)';

// Hashes are stored as bytes and read as the text callers know (migration …-binary-hashes).
const EVENT_COLUMNS = `e.global_position, e.transaction_id::text as tx, e.stream_id, e.category, e.revision,
  e.event_id::text as event_id, e.event_type, e.schema_version, e.data, e.metadata, e.created_at,
  es_hash_text(e.prev_hash) as prev_hash, es_hash_text(e.hash) as hash`;

// The first visible revision: truncate_before (also set by a soft delete), maxCount, then the
// caller's bound; maxAge filters by creation time.
const VISIBLE = `e.stream_id = s.stream_id
    and e.revision >= greatest(coalesce(s.truncate_before, 0), s.version + 1 - coalesce(s.max_count, s.version + 1))
    and (s.max_age is null or e.created_at > now() - s.max_age)`;

/** $1 stream, $2 first revision (inclusive), $3 max count (null: all). */
export const READ_STREAM_FORWARDS_SQL = `
select s.status, s.version as stream_version, ${EVENT_COLUMNS}
from es_streams s left join lateral (
  select * from es_events e where ${VISIBLE} and e.revision >= $2 order by e.revision limit $3
) e on true
where s.stream_id = $1
order by e.revision`;

/** $1 stream, $2 last revision (inclusive; null: the end), $3 max count (null: all). */
export const READ_STREAM_BACKWARDS_SQL = `
select s.status, s.version as stream_version, ${EVENT_COLUMNS}
from es_streams s left join lateral (
  select * from es_events e where ${VISIBLE} and e.revision <= coalesce($2, s.version) order by e.revision desc limit $3
) e on true
where s.stream_id = $1
order by e.revision desc`;

export type FilterKind = 'none' | 'categories' | 'types' | 'both';

const FILTERS: Record<FilterKind, string> = {
  none: '',
  categories: 'and e.category = any($5::text[])',
  types: 'and e.event_type = any($5::text[])',
  both: 'and e.category = any($5::text[]) and e.event_type = any($6::text[])',
};

/**
 * A page of the global feed by the feed's ordering rule (docs/event-store.md), and in the same statement
 * (hence the same snapshot) the newest event the rule lets anyone see: the page's `scannedTo`.
 * An event whose transaction is not yet below the horizon waits for the next read, so a
 * transaction that commits late is never skipped.
 *
 * The horizon is the snapshot's xmin, which every transaction of the server holds back, whatever
 * its database. When the caller names an xmin at or above it ($4: one that has stood still, or
 * the largest xid8 for a read that awaits an append of its process), the horizon is
 * instead the oldest transaction still in progress that is not known to be another database's
 * (pg_stat_get_activity shows its backend in another one): no such transaction can write here.
 * An xid the activity no longer shows (it has just ended, or is a prepared transaction) counts
 * as this database's. `seen` is the snapshot's xmin, for the caller to tell when it stands still;
 * `held_by` the transaction still in progress at the horizon, if one holds it there (with $4
 * named, one of this database).
 * $1 last tx (xid8 as text), $2 last position, $3 max count, $4 that xmin (or null), then the
 * filter arrays.
 */
export function readPageSql(kind: FilterKind): string {
  return `
with snap as materialized (select pg_current_snapshot() as s),
horizon as materialized (
  select pg_snapshot_xmin(s)::text as seen,
    case when pg_snapshot_xmin(s) <= $4::xid8 then coalesce(
      (select min(x) from pg_snapshot_xip(s) x where not exists (
        select 1 from pg_stat_get_activity(null) a
        where a.backend_xid = xid(x) and a.datid <> (select oid from pg_database where datname = current_database()))),
      pg_snapshot_xmax(s))
    else pg_snapshot_xmin(s) end as xmin
  from snap),
head as (
  select h.transaction_id, h.global_position from es_events h
  where h.transaction_id < (select xmin from horizon)
  order by h.transaction_id desc, h.global_position desc limit 1)
select horizon.seen, case when horizon.xmin < pg_snapshot_xmax(snap.s) then horizon.xmin::text end as held_by,
  head.transaction_id::text as head_tx, head.global_position as head_position, page.*
from snap cross join horizon left join head on true left join lateral (
  select ${EVENT_COLUMNS} from es_events e
  where (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
    and e.transaction_id < (select xmin from horizon) ${FILTERS[kind]}
  order by e.transaction_id, e.global_position limit $3
) page on head.transaction_id is not null
order by page.tx::xid8, page.global_position`;
}

export const HEAD_POSITION_SQL = `
select transaction_id::text as tx, global_position from es_events
order by transaction_id desc, global_position desc limit 1`;

/** $1 stream, $2 after revision, $3 page size: every stored event, hidden ones included. */
export const READ_CHAIN_SQL = `
select ${EVENT_COLUMNS} from es_events e
where e.stream_id = $1 and e.revision > $2 order by e.revision limit $3`;

/** Live streams only: status 0 (not soft-deleted or tombstoned) with at least one event. */
export const STREAM_REVISIONS_SQL =
  'select stream_id, version from es_streams where stream_id = any($1) and status = 0 and version >= 0';

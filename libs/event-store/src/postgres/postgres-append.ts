import { Pool, type ClientBase } from 'pg';
import { DuplicateEventIds, StreamDeleted, WrongExpectedVersion, type ActualState } from '../errors';
import type { AlongsideStatement, AppendResult, ExpectedState } from '../event-store.port';
import { pgPosition } from '../position';
import { hmacPads } from '../hash-chain';
import { categoryOf, type PreparedEvent } from '../prepare-events';
import { APPEND_SQL } from './postgres-sql';

type Queryable = Pool | ClientBase;

const EXPECTED_KIND = { any: 0, no_stream: 1, stream_exists: 2 } as const;

/** The parameters of es_append for one prepared batch; with `chainKey`, HMAC's padded keys (a keyed chain). */
export function appendParameters(
  streamId: string,
  events: PreparedEvent[],
  expected: ExpectedState,
  chainKey: Buffer | null = null,
): unknown[] {
  const exact = typeof expected === 'bigint';
  const pads = chainKey ? hmacPads(chainKey) : null;
  return [
    streamId,
    categoryOf(streamId),
    exact ? 3 : EXPECTED_KIND[expected],
    exact ? expected : null,
    JSON.stringify(streamId),
    events.map((e) => e.eventId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.type)),
    events.map((e) => e.schemaVersion),
    events.map((e) => e.dataJson),
    events.map((e) => e.metadataJson),
    pads?.inner ?? null,
    pads?.outer ?? null,
  ];
}

interface AppendRow {
  next_revision: bigint;
  tx: string;
  last_position: bigint;
}

/** es_append's parameters: the ones of a statement run alongside it follow them. */
const APPEND_PARAMETERS = 13;

/**
 * The append with `alongside` as a data-modifying WITH query of the same statement: PostgreSQL
 * runs it to completion whether or not the append reads it, and an error in either ends both.
 */
function withAlongside(alongside: AlongsideStatement): string {
  const text = alongside.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + APPEND_PARAMETERS}`);
  return `with alongside as (${text}) ${APPEND_SQL}`;
}

/**
 * Runs es_append on `db` (a pool: its own transaction; a client: the caller's transaction), with
 * `alongside` in the same statement when given.
 */
export async function runAppend(
  db: Queryable,
  streamId: string,
  events: PreparedEvent[],
  expected: ExpectedState,
  chainKey: Buffer | null = null,
  alongside?: AlongsideStatement,
): Promise<AppendResult> {
  try {
    const values = appendParameters(streamId, events, expected, chainKey);
    const { rows } = await db.query<AppendRow>(
      alongside
        ? {
            name: `parley_es_append+${alongside.name}`,
            text: withAlongside(alongside),
            values: [...values, ...alongside.values],
          }
        : { name: 'parley_es_append', text: APPEND_SQL, values },
    );
    const row = rows[0];
    return { nextRevision: BigInt(row.next_revision), position: pgPosition(row.tx, row.last_position) };
  } catch (err) {
    throw await translateAppendError(err, db, streamId, expected);
  }
}

interface PgError {
  code?: string;
  detail?: string;
  constraint?: string;
}

async function translateAppendError(
  err: unknown,
  db: Queryable,
  streamId: string,
  expected: ExpectedState,
): Promise<unknown> {
  const { code, detail, constraint } = (err ?? {}) as PgError;
  if (code === 'PX001') return new StreamDeleted(streamId);
  if (code === 'PX002') return new DuplicateEventIds(streamId, (detail ?? '').split(','));
  if (code === 'PX003') return new WrongExpectedVersion(streamId, expected, parseActual(detail));
  if (code === '23505' && constraint === 'es_events_stream_id_event_id_key') return new DuplicateEventIds(streamId, []);
  if (code === '23505' && constraint === 'es_events_stream_id_revision_key') {
    return new WrongExpectedVersion(streamId, expected, await actualState(db, streamId));
  }
  return err;
}

const parseActual = (detail: string | undefined): ActualState =>
  detail && /^\d+$/.test(detail) ? BigInt(detail) : 'no_stream';

async function actualState(db: Queryable, streamId: string): Promise<ActualState> {
  // Only reached when the row lock was bypassed (rows written behind the store's back); a
  // caller's aborted transaction cannot answer, so the pool is not used then.
  if (!(db instanceof Pool)) return 'no_stream';
  const { rows } = await db.query<{ version: bigint; status: number }>(
    'select version, status from es_streams where stream_id = $1',
    [streamId],
  );
  const row = rows[0];
  return row && row.version >= 0n && row.status === 0 ? BigInt(row.version) : 'no_stream';
}

import { Socket } from 'node:net';
import { Pool, types } from 'pg';
import { raisedBy } from '../errors/unavailable';

// int8 (bigint) columns come back as strings by default; event revisions and positions are
// bigints, so parse them as such once for every pool.
types.setTypeParser(types.builtins.INT8, (v) => BigInt(v));

export interface PgPoolOptions {
  url: string;
  max: number;
  applicationName?: string;
  /** How long a query waits for a connection (pool full, or connecting); unset: for ever. */
  acquireTimeoutMs?: number;
  /** PostgreSQL's statement_timeout on every connection; unset: none (migrations, CLI tools). */
  statementTimeoutMs?: number;
}

/**
 * The socket of each `pg` connection (its `stream` option), whose errors say they came from
 * PostgreSQL: a connection reset or refused is answered 503 naming PostgreSQL, not "a dependency".
 * Listening first, it marks the error before `pg` rejects the query with it.
 */
export const pgSocket = (): Socket => new Socket().on('error', (err) => raisedBy(err, 'postgres'));

/**
 * The pool options of the two timeouts, for `pg` and TypeORM's `extra` alike. A query past
 * either fails with an error unavailableError answers 503: a saturated pool or a stuck statement
 * then turns into a clean refusal instead of requests that hang.
 */
export function pgTimeouts(options: Pick<PgPoolOptions, 'acquireTimeoutMs' | 'statementTimeoutMs'>): {
  connectionTimeoutMillis?: number;
  statement_timeout?: number;
} {
  return {
    ...(options.acquireTimeoutMs ? { connectionTimeoutMillis: options.acquireTimeoutMs } : {}),
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  };
}

export function createPgPool(options: PgPoolOptions): Pool {
  const pool = new Pool({
    connectionString: options.url,
    max: options.max,
    application_name: options.applicationName ?? 'parley',
    idleTimeoutMillis: 30_000,
    stream: pgSocket,
    ...pgTimeouts(options),
  });
  // An idle client that loses its connection emits on the pool; without a listener Node exits.
  pool.on('error', () => undefined);
  return pool;
}

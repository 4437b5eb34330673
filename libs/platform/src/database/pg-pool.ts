import { Pool, types } from 'pg';

// int8 (bigint) columns come back as strings by default; event revisions and positions are
// bigints, so parse them as such once for every pool.
types.setTypeParser(types.builtins.INT8, (v) => BigInt(v));

export interface PgPoolOptions {
  url: string;
  max: number;
  applicationName?: string;
}

export function createPgPool(options: PgPoolOptions): Pool {
  const pool = new Pool({
    connectionString: options.url,
    max: options.max,
    application_name: options.applicationName ?? 'parley',
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its connection emits on the pool; without a listener Node exits.
  pool.on('error', () => undefined);
  return pool;
}

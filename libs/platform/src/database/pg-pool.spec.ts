import { freePort } from '@parley/testing';
import { unavailableError } from '../errors/unavailable';
import { createPgPool } from './pg-pool';

describe('createPgPool', () => {
  it('marks its sockets’ errors as PostgreSQL’s: a refused connection is answered 503 naming PostgreSQL', async () => {
    const pool = createPgPool({ url: `postgres://postgres@127.0.0.1:${await freePort()}/parley`, max: 1 });
    try {
      const err = await pool.query('select 1').catch((e: unknown) => e);

      expect(err).toMatchObject({ code: 'ECONNREFUSED' });
      expect(unavailableError(err)?.details).toEqual({ dependency: 'postgres', retryAfterSeconds: 5 });
    } finally {
      await pool.end();
    }
  });
});

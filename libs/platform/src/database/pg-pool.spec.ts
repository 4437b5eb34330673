import { createTestDatabase, freePort, type TestDatabase } from '@parley/testing';
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

  describe('timeouts', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('pg_pool_timeouts');
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('gives up waiting for a connection of a full pool after acquireTimeoutMs, as PostgreSQL unavailable', async () => {
      const pool = createPgPool({ url: db.url, max: 1, acquireTimeoutMs: 200 });
      const held = await pool.connect();
      try {
        const started = Date.now();
        const err = await pool.query('select 1').catch((e: unknown) => e);

        expect(Date.now() - started).toBeLessThan(2000);
        expect(unavailableError(err)?.details).toEqual({ dependency: 'postgres', retryAfterSeconds: 5 });
        held.release();
        await expect(pool.query('select 1 as one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
      } finally {
        await pool.end();
      }
    });

    it('cancels a statement past statementTimeoutMs, as PostgreSQL unavailable, and runs the next one', async () => {
      const pool = createPgPool({ url: db.url, max: 1, statementTimeoutMs: 200 });
      try {
        const err = await pool.query('select pg_sleep(3)').catch((e: unknown) => e);

        expect(err).toMatchObject({ code: '57014' });
        expect(unavailableError(err)?.code).toBe('SERVICE_UNAVAILABLE');
        await expect(pool.query('select 1 as one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
      } finally {
        await pool.end();
      }
    });
  });
});

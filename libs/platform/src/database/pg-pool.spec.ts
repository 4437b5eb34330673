import { createServer } from 'node:net';
import { once } from 'node:events';
import { unavailableError } from '../errors/unavailable';
import { createPgPool } from './pg-pool';

/** A port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

describe('createPgPool', () => {
  it('marks its sockets’ errors as PostgreSQL’s: a refused connection is answered 503 naming PostgreSQL', async () => {
    const pool = createPgPool({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/parley`, max: 1 });
    try {
      const err = await pool.query('select 1').catch((e: unknown) => e);

      expect(err).toMatchObject({ code: 'ECONNREFUSED' });
      expect(unavailableError(err)?.details).toEqual({ dependency: 'postgres', retryAfterSeconds: 5 });
    } finally {
      await pool.end();
    }
  });
});

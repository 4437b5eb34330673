import { randomBytes } from 'node:crypto';
import { loadConfig } from '@parley/config';
import { createPgPool } from '@parley/platform';
import { type DomainError, errorBody } from '@parley/core';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { connect, headers as natsHeaders, JSONCodec, type NatsConnection } from 'nats';
import type { Pool } from 'pg';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeysService } from './api-keys/api-keys.service';
import { Authenticator } from './authenticator';

const NATS_URL = process.env.PARLEY_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const ADMIN_KEY = 'admin-bootstrap-key-0123456789';

describe('NATS credential check', () => {
  let db: TestDatabase;
  let pool: Pool;
  let nc: NatsConnection;
  let keys: ApiKeysService;
  const subject = `test-${randomBytes(4).toString('hex')}.qry.whoami`;
  const codec = JSONCodec();

  beforeAll(async () => {
    db = await createTestDatabase('auth_nats');
    pool = createPgPool({ url: db.url, max: 2 });
    keys = new ApiKeysService(new ApiKeyRepository(pool));
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, PARLEY_ADMIN_API_KEY: ADMIN_KEY });
    const authenticator = new Authenticator(config, keys);
    nc = await connect({ servers: NATS_URL });
    // A handler shaped like the real NATS handlers: authenticate from the header, then answer.
    nc.subscribe(subject, {
      callback: (_err, msg) => {
        authenticator
          .authenticateNatsHeaders(msg.headers)
          .then((principal) => msg.respond(codec.encode({ result: principal })))
          .catch((err: DomainError) => msg.respond(codec.encode(errorBody(err))));
      },
    });
    await nc.flush();
  });

  afterAll(async () => {
    await nc?.drain();
    await pool?.end();
    await db?.drop();
  });

  async function ask(authorization?: string) {
    const h = natsHeaders();
    if (authorization) h.set('authorization', authorization);
    const reply = await nc.request(subject, codec.encode({}), { headers: h, timeout: 5_000 });
    return codec.decode(reply.data) as { result?: unknown; error?: { code: string } };
  }

  it('authenticates an API key sent in the authorization header', async () => {
    const created = await keys.create({ subject: 'svc-billing', roles: ['client'] });
    expect(await ask(`Bearer ${created.key}`)).toEqual({
      result: { subject: 'svc-billing', roles: ['client'], keyId: created.id },
    });
  });

  it('authenticates the bootstrap admin key', async () => {
    expect(await ask(`Bearer ${ADMIN_KEY}`)).toEqual({
      result: { subject: 'admin', roles: ['admin'], keyId: 'bootstrap' },
    });
  });

  it('answers UNAUTHENTICATED without a header, with a wrong key and with a revoked key', async () => {
    const revoked = await keys.create({ subject: 'svc-old', roles: ['client'] });
    await keys.revoke(revoked.id);

    const answers = await Promise.all([
      ask(),
      ask('Bearer pk_wrongwrongwrongwrongwrong'),
      ask(`Bearer ${revoked.key}`),
      ask(ADMIN_KEY),
    ]);

    expect(answers.map((a) => a.error?.code)).toEqual(Array(4).fill('UNAUTHENTICATED'));
  });
});

import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';

describe('ApiKeysService', () => {
  let db: TestDatabase;
  let pool: Pool;
  /** The SQL the services send, first words only. */
  let statements: string[];

  beforeAll(async () => {
    db = await createTestDatabase('api_keys');
    pool = createPgPool({ url: db.url, max: 2 });
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as { query: unknown }).query = (text: string, ...rest: unknown[]) => {
      statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
      return query(text, ...rest);
    };
  });
  beforeEach(() => {
    statements = [];
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  /** Revokes a key behind the service's back, as another instance does. */
  const revokeElsewhere = (id: string) => pool.query('update auth_api_keys set revoked_at = now() where id = $1', [id]);

  it('trusts a key that authenticated without asking the database again, and writes last_used_at once', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 60_000);
    const created = await keys.create({ subject: 'svc-billing', roles: ['client'] });
    statements = [];

    const principals = [];
    for (let i = 0; i < 5; i++) principals.push(await keys.authenticate(created.key));

    expect(principals).toEqual(Array(5).fill({ subject: 'svc-billing', roles: ['client'], keyId: created.id }));
    expect(statements).toEqual(['select * from', 'update auth_api_keys set']);
  });

  it('looks a made-up key up once within the trust time, then again after it', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 150);
    const madeUp = 'pk_madeupmadeupmadeupmadeupmadeup00';

    for (let i = 0; i < 5; i++) expect(await keys.authenticate(madeUp)).toBeNull();
    expect(statements).toEqual(['select * from']);
    await sleep(200);
    expect(await keys.authenticate(madeUp)).toBeNull();
    expect(statements).toEqual(['select * from', 'select * from']);
  });

  it('refuses a key at once on the instance that revoked it', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 60_000);
    const created = await keys.create({ subject: 'svc-old', roles: ['client'] });
    expect(await keys.authenticate(created.key)).not.toBeNull();

    await keys.revoke(created.id);

    expect(await keys.authenticate(created.key)).toBeNull();
  });

  it('refuses a key revoked through another instance once the trust time has passed', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 150);
    const created = await keys.create({ subject: 'svc-moved', roles: ['client'] });
    expect(await keys.authenticate(created.key)).not.toBeNull();

    await revokeElsewhere(created.id);
    expect(await keys.authenticate(created.key)).not.toBeNull();
    await sleep(200);

    expect(await keys.authenticate(created.key)).toBeNull();
  });

  it('with a trust time of 0 looks every key up', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 0);
    const created = await keys.create({ subject: 'svc-strict', roles: ['client'] });
    expect(await keys.authenticate(created.key)).not.toBeNull();

    await revokeElsewhere(created.id);

    expect(await keys.authenticate(created.key)).toBeNull();
  });

  it('never trusts an unknown key, and looks it up once within the trust time', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(pool), 60_000);
    statements = [];

    expect(await keys.authenticate('pk_unknown_unknown_unknown')).toBeNull();
    expect(await keys.authenticate('pk_unknown_unknown_unknown')).toBeNull();

    expect(statements).toEqual(['select * from']);
  });
});

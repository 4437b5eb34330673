import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import { DatabaseModule, RedisModule } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { HttpErrorFilter } from '@parley/transport';
import { AuthModule } from '../auth.module';
import { assertCanCommand, assertCanRead } from '../ownership/ownership.policy';
import type { Principal } from '../principal';
import { CurrentPrincipal, type DeferredRateLimit, Public, Roles, StartsTurn } from './auth.decorators';

const OWNERS: Record<string, string> = { 'c-alice': 'alice' };

/** Shaped like the real controllers: roles on the route, ownership in the handler. */
@Controller('api/v1')
class SampleController {
  @Post('conversations/:id/messages')
  @Roles('client', 'admin')
  @HttpCode(200)
  command(@Param('id') id: string, @CurrentPrincipal() principal: Principal) {
    assertCanCommand(principal, OWNERS[id]);
    return { ok: true };
  }

  @Get('conversations/:id')
  @Roles('client', 'auditor', 'admin')
  query(@Param('id') id: string, @CurrentPrincipal() principal: Principal) {
    assertCanRead(principal, OWNERS[id], { type: 'Conversation', id });
    return { id, owner: OWNERS[id], caller: principal.subject };
  }

  @Get('conversations/:id/events')
  @Roles('auditor', 'admin')
  events() {
    return { events: [] };
  }

  @Post('conversations/:id/kill')
  @Roles('admin')
  @HttpCode(200)
  kill() {
    return { killed: true };
  }

  /** Like a turn command: it awaits the rate limit's verdict itself (TurnCommand, beside its slot). */
  @Post('conversations/:id/answers')
  @Roles('client', 'admin')
  @StartsTurn()
  @HttpCode(200)
  async turn(@Req() request: DeferredRateLimit) {
    const deferred = request.rateLimit !== undefined;
    await request.rateLimit;
    return { deferred };
  }

  @Get('ping')
  @Public()
  ping() {
    return { pong: true };
  }
}

const ADMIN_KEY = 'admin-bootstrap-key-0123456789';

async function startApp(env: Record<string, string>): Promise<NestFastifyApplication> {
  const config = loadConfig({ NODE_ENV: 'test', PARLEY_ADMIN_API_KEY: ADMIN_KEY, ...env });
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot(), RedisModule.forRoot(), AuthModule],
    controllers: [SampleController],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  app.useGlobalFilters(new HttpErrorFilter());
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

describe('AuthGuard', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  const keys: Record<string, string> = {};
  const as = (who: string) => (who === 'nobody' ? {} : { authorization: `Bearer ${keys[who] ?? who}` });

  beforeAll(async () => {
    db = await createTestDatabase('auth_guard');
    app = await startApp({ DATABASE_URL: db.url });
    keys.admin = ADMIN_KEY;
    for (const [who, subject, roles] of [
      ['alice', 'alice', ['client']],
      ['bob', 'bob', ['client']],
      ['auditor', 'audit-bot', ['auditor']],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: as('admin'),
        payload: { subject, roles, name: who },
      });
      expect(res.statusCode).toBe(201);
      keys[who] = res.json().key;
    }
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const routes = {
    command: { method: 'POST', url: '/api/v1/conversations/c-alice/messages' },
    query: { method: 'GET', url: '/api/v1/conversations/c-alice' },
    audit: { method: 'GET', url: '/api/v1/conversations/c-alice/events' },
    admin: { method: 'POST', url: '/api/v1/conversations/c-alice/kill' },
    keys: { method: 'GET', url: '/api/v1/keys' },
    public: { method: 'GET', url: '/api/v1/ping' },
  } as const;

  it.each([
    ['alice (client, owner)', 'alice', [200, 200, 403, 403, 403, 200]],
    ['bob (client, not owner)', 'bob', [403, 404, 403, 403, 403, 200]],
    ['auditor', 'auditor', [403, 200, 200, 403, 403, 200]],
    ['admin', 'admin', [200, 200, 200, 200, 200, 200]],
    ['no credential', 'nobody', [401, 401, 401, 401, 401, 200]],
    ['an unknown API key', 'pk_unknownunknownunknownunknown', [401, 401, 401, 401, 401, 200]],
    ['a malformed token without JWT configured', 'not-a-key', [401, 401, 401, 401, 401, 200]],
  ])('%s on command, query, audit, admin, keys and public routes', async (_who, who, expected) => {
    const statuses = [];
    for (const route of Object.values(routes)) {
      const res = await app.inject({ ...route, headers: as(who) });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual(expected);
  });

  it('answers refusals with the error shape and stable codes', async () => {
    const unauth = await app.inject({ ...routes.query, headers: as('nobody') });
    const forbidden = await app.inject({ ...routes.admin, headers: as('auditor') });
    const hidden = await app.inject({ ...routes.query, headers: as('bob') });
    expect(unauth.json().error.code).toBe('UNAUTHENTICATED');
    expect(forbidden.json().error).toMatchObject({ code: 'FORBIDDEN', details: { requiredRoles: ['admin'] } });
    expect(hidden.json().error).toEqual({
      code: 'NOT_FOUND',
      message: "Conversation 'c-alice' was not found.",
      details: { conversation: 'c-alice' },
    });
  });

  it('shows a created key once: listing gives neither the key nor its digest', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: as('admin'),
      payload: { subject: 'svc-a', roles: ['client'] },
    });
    const { key, id } = created.json();
    expect(key).toMatch(/^pk_[\w-]{43}$/);

    const list = await app.inject({ ...routes.keys, headers: as('admin') });
    const text = list.body;
    expect(list.json().keys.map((k: { id: string }) => k.id)).toContain(id);
    expect(text).not.toContain(key);
    expect(text).not.toContain('hash');
  });

  it('refuses a revoked key', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: as('admin'),
      payload: { subject: 'alice', roles: ['client'] },
    });
    const { key, id } = created.json();
    const auth = { authorization: `Bearer ${key}` };
    expect((await app.inject({ ...routes.query, headers: auth })).statusCode).toBe(200);

    const revoked = await app.inject({ method: 'DELETE', url: `/api/v1/keys/${id}`, headers: as('admin') });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).toBeTruthy();

    const after = await app.inject({ ...routes.query, headers: auth });
    expect(after.statusCode).toBe(401);
  });

  it('rejects a key request with unknown roles as VALIDATION_FAILED', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: as('admin'),
      payload: { subject: 'x', roles: ['root'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('answers 404 for revoking an unknown key', async () => {
    const res = await app.inject({
      method: 'DELETE',
      url: '/api/v1/keys/00000000-0000-0000-0000-000000000000',
      headers: as('admin'),
    });
    expect(res.statusCode).toBe(404);
  });
});

describe('AuthGuard with limits and switches', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('auth_guard_limits');
  });
  afterAll(() => db?.drop());

  it('answers 429 RATE_LIMITED with Retry-After once a subject is over its per-minute limit', async () => {
    const app = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const headers = { authorization: `Bearer ${ADMIN_KEY}` };
      const statuses = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await app.inject({ method: 'GET', url: '/api/v1/conversations/c-alice', headers });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(Number(last?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(last?.json().error.code).toBe('RATE_LIMITED');
      expect((await app.inject({ method: 'GET', url: '/api/v1/ping' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('counts a request of a @StartsTurn route and leaves its verdict for the command to await', async () => {
    const app = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const headers = { authorization: `Bearer ${ADMIN_KEY}` };
      const turn = () => app.inject({ method: 'POST', url: '/api/v1/conversations/c-alice/answers', headers });
      const first = await turn();
      expect([first.statusCode, first.json()]).toEqual([200, { deferred: true }]);
      expect((await app.inject({ method: 'GET', url: '/api/v1/conversations/c-alice', headers })).statusCode).toBe(200);

      const limited = await turn();

      expect([limited.statusCode, limited.json().error.code]).toEqual([429, 'RATE_LIMITED']);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });

  it('counts requests per client address before any credential is looked up, public routes included', async () => {
    const app = await startApp({ DATABASE_URL: db.url, RATE_LIMIT_PER_IP_PER_MINUTE: '4' });
    try {
      const from = (remoteAddress: string, key: string) =>
        app.inject({
          method: 'GET',
          url: '/api/v1/conversations/c-alice',
          remoteAddress,
          headers: { authorization: `Bearer ${key}` },
        });
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await from('10.0.0.7', `pk_madeup${i}madeupmadeupmadeupmadeup`)).statusCode);
      statuses.push((await app.inject({ method: 'GET', url: '/api/v1/ping', remoteAddress: '10.0.0.7' })).statusCode);
      const limited = await from('10.0.0.7', ADMIN_KEY);
      const publicLimited = await app.inject({ method: 'GET', url: '/api/v1/ping', remoteAddress: '10.0.0.7' });

      expect(statuses).toEqual([401, 401, 401, 200]);
      expect([limited.statusCode, limited.json().error.code]).toEqual([429, 'RATE_LIMITED']);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(publicLimited.statusCode).toBe(429);
      expect((await from('10.0.0.8', ADMIN_KEY)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('lets paths listed in PARLEY_PUBLIC_PATHS through without a credential', async () => {
    const app = await startApp({ DATABASE_URL: db.url, PARLEY_PUBLIC_PATHS: '/api/v1/conversations/*' });
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/conversations/c-alice/events' });
      expect(res.statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/api/v1/keys' })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('runs every request as an admin when PARLEY_AUTH_ENABLED=false', async () => {
    const app = await startApp({ DATABASE_URL: db.url, PARLEY_AUTH_ENABLED: 'false' });
    try {
      const res = await app.inject({ method: 'POST', url: '/api/v1/conversations/c-alice/kill' });
      expect(res.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

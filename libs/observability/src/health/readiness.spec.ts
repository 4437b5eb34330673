import type { ChildProcess } from 'node:child_process';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import { DatabaseModule, RedisModule } from '@parley/platform';
import { createTestDatabase, freePort, killProcess, startRedisServer, type TestDatabase } from '@parley/testing';
import { HttpErrorFilter } from '@parley/transport';
import { ObservabilityModule } from '../observability.module';
import { ReadinessService } from './readiness.service';

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('GET /health/ready', () => {
  let db: TestDatabase;
  let redis: ChildProcess;
  let port: number;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    db = await createTestDatabase('readiness');
    port = await freePort();
    redis = await startRedisServer(port);
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}` });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot(), RedisModule.forRoot(), ObservabilityModule],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app.useGlobalFilters(new HttpErrorFilter());
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app?.close();
    if (redis) await killProcess(redis);
    await db?.drop();
  });

  const ready = () => app.inject({ method: 'GET', url: '/health/ready' });

  it('answers 503 naming redis while Redis is down, and 200 again once it is back', async () => {
    const before = await ready();
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok', nats: 'disabled' } });

    await killProcess(redis);
    const down = await eventually(ready, (r) => r.statusCode === 503);
    expect(down.statusCode).toBe(503);
    expect(down.json()).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'not ready: redis',
        details: { checks: { postgres: 'ok', redis: 'down', nats: 'disabled' } },
      },
    });

    redis = await startRedisServer(port);
    const back = await eventually(ready, (r) => r.statusCode === 200);
    expect(back.statusCode).toBe(200);
    expect(back.json().checks.redis).toBe('ok');
  });

  it('answers a flood of readiness probes with one round of checks a second', async () => {
    let probed = 0;
    app.get(ReadinessService).register('counted', async () => (probed += 1));
    const answers = await Promise.all(Array.from({ length: 20 }, () => ready()));
    for (let i = 0; i < 10; i++) answers.push(await ready());

    expect(answers.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
    expect(probed).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    await ready();
    expect(probed).toBe(2);
    app.get(ReadinessService).register('counted', null);
  });

  it('keeps liveness at 200 whatever the dependencies do', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('ok');
  });

  // Last: the process is shutting down from here on.
  it('answers 503 from the start of a shutdown, while liveness stays 200', async () => {
    app.get(ReadinessService).beforeApplicationShutdown();
    const res = await ready();
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.json()).toEqual({
      error: { code: 'SERVICE_UNAVAILABLE', message: 'not ready: shutting down', details: { shuttingDown: true } },
    });
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});

import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Config } from '@parley/config';
import { createLogger } from '@parley/observability';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { createHttpApp, listenForOperations } from '@parley/transport';
import type { AddressInfo } from 'node:net';
import { CommandApiModule } from '../apps/command-api/src/command-api.module';
import { ProjectorModule } from '../libs/transport/src';
import { QueryApiModule } from '../apps/query-api/src/query-api.module';
import { AppModule } from '../apps/server/src/app.module';
import { WorkerModule } from '../apps/worker/src/worker.module';
import { ADMIN_KEY, testConfig } from './support/parley-app';

/** Each deployable's module boots against a fresh database, real Redis and NATS, and answers /health. */
describe('the deployables boot', () => {
  let db: TestDatabase;
  let config: Config;
  beforeAll(async () => {
    db = await createTestDatabase('deployables');
    config = testConfig(db.url);
  });
  afterAll(() => db?.drop());

  const get = async (url: string) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    return { status: res.status, body: await res.text() };
  };

  const apis: [string, (c: Config) => DynamicModule, string, string][] = [
    ['server', (c) => AppModule.forRoot(c, { worker: false }), '/docs-json', '/api/v1/no-such-route'],
    ['command-api', (c) => CommandApiModule.forRoot(c), '/api/v1/keys', '/api/v1/actions'],
    ['query-api', (c) => QueryApiModule.forRoot(c), '/api/v1/actions', '/api/v1/keys/x'],
  ];
  it.each(apis)('%s serves /health and its own routes, not the others', async (_name, module, own, foreign) => {
    const app = await createHttpApp(module(config), config, createLogger({ level: 'silent' }));
    try {
      await app.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
      expect((await get(`${url}/health`)).status).toBe(200);
      expect(JSON.parse((await get(`${url}/health/ready`)).body)).toEqual({
        status: 'ok',
        checks: { postgres: 'ok', redis: 'ok', nats: 'ok' },
      });
      expect((await get(url + own)).status).toBe(200);
      expect((await get(url + foreign)).status).toBe(404);
    } finally {
      await app.close();
    }
  });

  const background: [string, (c: Config) => DynamicModule][] = [
    ['worker', (c) => WorkerModule.forRoot(c)],
    ['projector', (c) => ProjectorModule.forRoot(c)],
  ];
  it.each(background)('%s answers /health, /health/ready and /metrics and mounts no routes', async (_n, module) => {
    const context = await NestFactory.createApplicationContext(module(config), { logger: false });
    const server = await listenForOperations(context, 0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(JSON.parse((await get(`${url}/health`)).body)).toMatchObject({ status: 'ok' });
      expect((await get(`${url}/health/ready`)).status).toBe(200);
      expect((await get(`${url}/metrics`)).body).toContain('process_cpu_seconds_total');
      const catalog = await get(`${url}/api/v1/catalog/agents`);
      expect([catalog.status, JSON.parse(catalog.body).error.code]).toEqual([404, 'NOT_FOUND']);
    } finally {
      server.close();
      server.closeAllConnections();
      await context.close();
    }
  });
});

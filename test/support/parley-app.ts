import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService } from '@parley/catalog';
import { type Config, loadConfig } from '@parley/config';
import { createLogger } from '@parley/observability';
import { settlesWithin } from '@parley/platform';
import type { DestinationStream } from 'pino';
import {
  createTestDatabase,
  startSimulator,
  type Simulator,
  type SimulatorOptions,
  type TestDatabase,
} from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { headers, type NatsConnection } from 'nats';
import { randomBytes } from 'node:crypto';
import { AppModule } from '../../apps/server/src/app.module';
import { testCatalog } from './test-catalog';

export const ADMIN_KEY = 'pk_test_admin_key_0123456789abcdef';

export interface ParleyUnderTest {
  url: string;
  config: Config;
  app: NestFastifyApplication;
  simulator: Simulator;
  db: TestDatabase;
  /** HTTP call as `key` (default: the admin key); returns status and parsed body. */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * HTTP calls to the Parley at `url`, as the admin unless `headers` say otherwise; the body goes
 * as JSON, and the answer's body comes back parsed (null when empty).
 */
export function callerOf(url: string): ParleyUnderTest['call'] {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

/**
 * The configuration of a Parley under test: `databaseUrl`, the real Redis and NATS on 127.0.0.1
 * under a prefix of its own, a fresh encryption key, ADMIN_KEY as the admin's, no logs.
 */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: 'redis://127.0.0.1:6379',
    NATS_URL: 'nats://127.0.0.1:4222',
    PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PARLEY_ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'silent',
    // A turn still waiting on a model call at the end of a test (a `hang` reply) is stopped 1 s
    // into the app's close, rather than drained until the call's timeout.
    SHUTDOWN_GRACE_MS: '1000',
    ...env,
  });
}

/** Where the app's logs go; by default it logs nothing. */
export interface LogCapture {
  destination: DestinationStream;
  /** Default 'trace'. */
  level?: string;
}

/**
 * The all-in-one server on a fresh database, real Redis and NATS (unique prefix), with the
 * simulator as its model and the test catalog applied — driven over real HTTP.
 */
export async function startParley(
  label: string,
  env: Record<string, string> = {},
  catalog?: (simUrl: string) => unknown,
  logs?: LogCapture,
  simulatorOptions: SimulatorOptions = {},
): Promise<ParleyUnderTest> {
  const db = await createTestDatabase(label);
  const simulator = await startSimulator(simulatorOptions);
  const config = testConfig(db.url, { PORT: '0', ...env });
  const logger = logs
    ? createLogger({ level: logs.level ?? 'trace' }, logs.destination)
    : createLogger({ level: 'silent' });
  const app = await createHttpApp(AppModule.forRoot(config), config, logger);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  await app.get(CatalogService).apply((catalog ?? testCatalog)(simulator.url), { dryRun: false });
  const call = callerOf(url);
  return {
    url,
    config,
    app,
    simulator,
    db,
    call,
    close: async () => {
      // Running turns get SHUTDOWN_GRACE_MS (1 s here), then the queue aborts them. Past 15 s the
      // database goes anyway, and takes the app's connections.
      await saysIfSlow('app.close()', app.close(), 15_000);
      await saysIfSlow('simulator.close()', simulator.close());
      await saysIfSlow('db.drop()', db.drop());
    },
  };
}

/**
 * Says on stderr which step of a test's teardown is still running after 10 s (a hung hook names
 * itself); with `giveUpMs`, the teardown goes on without it after that long.
 */
async function saysIfSlow(step: string, work: Promise<unknown>, giveUpMs?: number): Promise<unknown> {
  const timer = setTimeout(() => process.stderr.write(`test Parley: ${step} still running after 10 s\n`), 10_000);
  const done = work.finally(() => clearTimeout(timer));
  if (giveUpMs === undefined || (await settlesWithin(done, giveUpMs))) return done;
  done.catch(() => undefined);
  process.stderr.write(`test Parley: ${step} gave up on after ${giveUpMs} ms\n`);
}

/** A command API beside a running Parley: the same server without the turn worker, on `config`. */
export async function startCommandApi(
  config: Config,
): Promise<{ app: NestFastifyApplication; call: ParleyUnderTest['call']; close(): Promise<void> }> {
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: false }),
    config,
    createLogger({ level: 'silent' }),
  );
  await app.listen(0, '127.0.0.1');
  const call = callerOf(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
  return { app, call, close: () => app.close() };
}

/** Calls `call` until it answers something else than 503 (a dependency back after an outage), and returns that answer. */
export async function afterOutage(
  call: () => ReturnType<ParleyUnderTest['call']>,
  ms = 10_000,
): ReturnType<ParleyUnderTest['call']> {
  for (const deadline = Date.now() + ms; ;) {
    const answer = await call();
    if (answer.status !== 503 || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A NATS request on `<prefix>.<kind>.<method>` as a plain client would send it (`subject`: `qry.findConversation`…); the parsed reply. */
export async function natsCall(
  nc: NatsConnection,
  parley: ParleyUnderTest,
  subject: string,
  payload: unknown,
  key?: string,
): Promise<any> {
  const h = headers();
  if (key) h.set('authorization', `Bearer ${key}`);
  const msg = await nc.request(
    `${parley.config.prefix}.${subject}`,
    new TextEncoder().encode(JSON.stringify(payload)),
    {
      headers: h,
      timeout: 10_000,
    },
  );
  return JSON.parse(new TextDecoder().decode(msg.data));
}

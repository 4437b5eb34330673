import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@parley/config';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import { resolveDatabase } from '@parley/platform';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { createScratchDatabase, demoScript, startSimulator } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { randomBytes } from 'node:crypto';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { parse } from 'yaml';
import { AppModule } from '../apps/server/src/app.module';

const ADMIN_URL = process.env.PARLEY_DEMO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CHUNK_LATENCY_MS = 25;

export interface DemoStack {
  url: string;
  adminKey: string;
  /** What answers as the model, for the banner. */
  modelLabel: string;
  databaseLabel: string;
  store: EventStore;
  live: LiveDeltas;
  stop(): Promise<void>;
}

/** A real model when OPENAI_API_KEY or PARLEY_DEMO_BASE_URL is set, else the simulator with the demo script. */
async function startModel() {
  const { OPENAI_API_KEY, PARLEY_DEMO_BASE_URL, PARLEY_DEMO_MODEL } = process.env;
  if (OPENAI_API_KEY || PARLEY_DEMO_BASE_URL) {
    const baseUrl = PARLEY_DEMO_BASE_URL ?? 'https://api.openai.com/v1';
    const model = PARLEY_DEMO_MODEL ?? 'gpt-4o-mini';
    return { baseUrl, apiKey: OPENAI_API_KEY ?? 'sk-local', model, label: `${model} at ${baseUrl}`, stop: noop };
  }
  const sim = await startSimulator({ rules: demoScript, latencyMs: CHUNK_LATENCY_MS });
  return {
    baseUrl: sim.url,
    apiKey: 'sk-demo',
    model: 'sim-chat',
    label: `the simulator at ${sim.url}`,
    stop: sim.close,
  };
}

/** A throwaway database on the local PostgreSQL when one answers, else the embedded one in a temporary directory. */
async function startDatabase(env: Record<string, string>, warn: (m: string) => void) {
  const admin = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 1500 });
  const reachable = await admin.connect().then(
    () => true,
    () => false,
  );
  await admin.end().catch(noop);
  if (reachable) {
    const db = await createScratchDatabase('demo', ADMIN_URL);
    return {
      config: loadConfig({ ...env, DATABASE_URL: db.url }),
      label: `PostgreSQL, database ${db.name}`,
      stop: db.drop,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'parley-demo-'));
  const database = await resolveDatabase(loadConfig({ ...env, PARLEY_DATA_DIR: dir }), warn);
  return {
    config: database.config,
    label: `embedded PostgreSQL (PGlite) under ${dir}`,
    stop: async () => {
      await database.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Boots what the demo needs in this process: the model, a database, the all-in-one server on a
 * loopback port (in-process queue, NATS off), and examples/catalog.yaml with its provider
 * pointed at the model. `stop` undoes everything, in reverse order.
 */
export async function startDemoStack(): Promise<DemoStack> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(noop);
  };
  try {
    const model = await startModel();
    stops.push(model.stop);
    const adminKey = `pk_demo_${randomBytes(16).toString('hex')}`;
    const env = {
      PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PARLEY_ADMIN_API_KEY: adminKey,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      HOST: '127.0.0.1',
      PORT: '0',
    };
    const logger = createLogger({ level: env.LOG_LEVEL as 'error', name: 'parley-demo' });
    const database = await startDatabase(env, (m) => logger.warn(m));
    stops.push(database.stop);
    const app: NestFastifyApplication = await createHttpApp(
      AppModule.forRoot(database.config),
      database.config,
      logger,
    );
    stops.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${port}`;
    await applyCatalog(url, adminKey, model);
    return {
      url,
      adminKey,
      modelLabel: model.label,
      databaseLabel: database.label,
      store: app.get(EVENT_STORE),
      live: app.get(LIVE_DELTAS),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function applyCatalog(url: string, adminKey: string, model: { baseUrl: string; apiKey: string; model: string }) {
  const bundle = parse(await readFile(join(__dirname, '..', 'examples', 'catalog.yaml'), 'utf8')) as {
    providers: Record<string, unknown>[];
    models: Record<string, unknown>[];
  };
  bundle.providers = bundle.providers.map((p) => ({ ...p, baseUrl: model.baseUrl, apiKey: model.apiKey }));
  bundle.models = bundle.models.map((m) => ({ ...m, llmModelName: model.model }));
  const res = await fetch(`${url}/api/v1/catalog/apply`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(bundle),
  });
  if (!res.ok) throw new Error(`applying examples/catalog.yaml failed: ${res.status} ${await res.text()}`);
}

const noop = async () => undefined;

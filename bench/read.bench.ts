/**
 * Read-side benchmark: projection lag while 50 conversations run, the rebuild rate over at
 * least 100,000 events, and query latency at 200 concurrent HTTP requests. The all-in-one
 * server (`AppModule`, projections running as in production) runs in this process on a fresh
 * database, dropped at the end; conversation events are appended straight through the event
 * store (the script of `conversationScript`), so the model and the worker stay out of the
 * numbers. Run with `npm run bench:read`; results are recorded in bench/README.md.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { AppModule } from '../apps/server/src/app.module';
import { loadConfig } from '../libs/config/src';
import { streamIdOf } from '../libs/domain/src';
import { EVENT_STORE, type EventStore } from '../libs/event-store/src';
import { createLogger } from '../libs/observability/src';
import { PG_POOL } from '../libs/platform/src';
import { PROJECTIONS, ProjectionsService, rebuildProjections } from '../libs/read-models/src';
import { conversationScript, createScratchDatabase, snapshotFixture, toAppend } from '../libs/testing/src';
import { createHttpApp } from '../libs/transport/src';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const LIVE_CONVERSATIONS = 50;
/** Each live conversation waits this long between two appends, like a turn between its steps. */
const GAP_MS = { min: 20, max: 100 };
const REBUILD_EVENTS = Number(process.env.BENCH_REBUILD_EVENTS ?? 100_000);
const QUERY_CONCURRENCY = 200;
const QUERIES_PER_KIND = Number(process.env.BENCH_QUERIES ?? 4000);

type Row = [string, string, string, string];
const rows: Row[] = [];
const row = (r: Row) => {
  rows.push(r);
  process.stdout.write(`${r.join(' | ')}\n`);
};

async function main(): Promise<void> {
  const db = await createScratchDatabase('bench_read', ADMIN_URL);
  const config = loadConfig({
    DATABASE_URL: db.url,
    PARLEY_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PARLEY_ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
  });
  // The read side alone, as a projector and a query API run it: no turn worker in the process. The
  // scripts below look like turns in progress, and a worker would rightly take them over (the turn
  // dispatcher stores their jobs again) and append to the streams the benchmark writes.
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: false }),
    config,
    createLogger({ level: 'silent' }),
  );
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const store = app.get<EventStore>(EVENT_STORE);
    const projections = app.get(ProjectionsService);
    const ids = await projectionLag(store, projections);
    await rebuildRate(store, projections, app.get<Pool>(PG_POOL));
    await queryLatency(url, ids);
    printTable();
  } finally {
    await app.close();
    await db.drop();
  }
}

/** 50 conversations append their scripts event by event; each append's wait until every read model shows it. */
async function projectionLag(store: EventStore, projections: ProjectionsService): Promise<string[]> {
  const ids = Array.from({ length: LIVE_CONVERSATIONS }, () => randomUUID());
  const lags: number[] = [];
  let late = 0;
  const started = performance.now();
  await Promise.all(
    ids.map(async (id, n) => {
      const events = toAppend(conversationScript(id, { owner: 'admin', snapshot: snapshotFixture() }));
      await sleep((n * GAP_MS.max) / LIVE_CONVERSATIONS);
      for (const [revision, event] of events.entries()) {
        const { position } = await store.append(streamIdOf(id), [event], {
          expected: revision === 0 ? 'no_stream' : BigInt(revision - 1),
        });
        const appended = performance.now();
        if (!(await projections.waitForPosition(position, 5000))) late++;
        lags.push(performance.now() - appended);
        await sleep(GAP_MS.min + Math.random() * (GAP_MS.max - GAP_MS.min));
      }
    }),
  );
  const rate = lags.length / ((performance.now() - started) / 1000);
  if (late > 0) throw new Error(`${late} appends were not projected within 5 s`);
  row([
    `projection lag, ${LIVE_CONVERSATIONS} conversations appending (${rate.toFixed(0)} events/s)`,
    String(lags.length),
    ms(percentiles(lags)),
    'p95 ≤ 100 ms',
  ]);
  return ids;
}

/** Fills the store to REBUILD_EVENTS conversation events, then rebuilds every read model from zero. */
async function rebuildRate(store: EventStore, projections: ProjectionsService, pool: Pool): Promise<void> {
  const perConversation = conversationScript(randomUUID(), { snapshot: snapshotFixture() }).length;
  const conversations = Math.ceil(REBUILD_EVENTS / perConversation);
  let next = 0;
  let last = '';
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < conversations) {
        next++;
        const id = randomUUID();
        const events = toAppend(conversationScript(id, { owner: 'admin', snapshot: snapshotFixture() }));
        last = (await store.append(streamIdOf(id), events, { expected: 'no_stream' })).position;
      }
    }),
  );
  // Let the live projections catch up first, so the rebuild is measured alone.
  await projections.waitForPosition(last, 120_000);
  const result = await rebuildProjections(pool, store, PROJECTIONS);
  const rate = result.events / (result.ms / 1000);
  row([
    `projection rebuild, ${PROJECTIONS.length} read models`,
    String(result.events),
    `${Math.round(rate).toLocaleString('en-US')} events/s (${(result.ms / 1000).toFixed(1)} s)`,
    '≥ 10,000 events/s',
  ]);
}

/** Closed loops of 200 concurrent HTTP GETs over conversations the lag phase wrote. */
async function queryLatency(url: string, ids: string[]): Promise<void> {
  const kinds = [
    { name: 'conversation by id', path: (id: string) => `/api/v1/conversations/${id}` },
    { name: 'messages of a conversation', path: (id: string) => `/api/v1/conversations/${id}/messages` },
  ];
  const get = async (path: string) => {
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body}`);
  };
  for (const kind of kinds) {
    const run = async (count: number, times: number[]) => {
      let left = count;
      await Promise.all(
        Array.from({ length: QUERY_CONCURRENCY }, async () => {
          while (left-- > 0) {
            const begun = performance.now();
            await get(kind.path(ids[Math.floor(Math.random() * ids.length)]!));
            times.push(performance.now() - begun);
          }
        }),
      );
    };
    // Warm-up at the same concurrency: JIT, prepared statements, 200 kept-alive client connections.
    await run(2 * QUERY_CONCURRENCY, []);
    const times: number[] = [];
    const started = performance.now();
    await run(QUERIES_PER_KIND, times);
    const rate = times.length / ((performance.now() - started) / 1000);
    row([
      `${kind.name}, ${QUERY_CONCURRENCY} concurrent (${rate.toFixed(0)} requests/s)`,
      String(times.length),
      ms(percentiles(times)),
      '',
    ]);
  }
}

function percentiles(values: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

const ms = (p: { p50: number; p95: number; p99: number }) =>
  `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} / ${p.p99.toFixed(1)} ms`;

function printTable(): void {
  const head = ['scenario', 'samples', 'p50 / p95 / p99 or rate', 'target'];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|---|---:|---:|---|\n`);
  for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

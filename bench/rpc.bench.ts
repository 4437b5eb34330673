/**
 * JSON-RPC benchmark: a batch of 20 queries in one request against the same 20 queries as single
 * JSON-RPC requests, one after another and all at once, on both doors (`POST /rpc` and NATS
 * `<prefix>.rpc`), with the same 20 as plain HTTP GETs beside them. The all-in-one server
 * (`AppModule`, no turn worker) runs in this process on a fresh database, dropped at the end;
 * the conversations are appended straight through the event store (`conversationScript`).
 * Run with `npm run bench:rpc`; results are recorded in bench/README.md and bench/history.md.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, headers, type NatsConnection } from 'nats';
import { AppModule } from '../apps/server/src/app.module';
import { streamIdOf } from '../libs/domain/src';
import { EVENT_STORE, type EventStore } from '../libs/event-store/src';
import { createLogger } from '../libs/observability/src';
import { ProjectionsService } from '../libs/read-models/src';
import { conversationScript, createScratchDatabase, snapshotFixture, toAppend } from '../libs/testing/src';
import { createHttpApp } from '../libs/transport/src';
import { benchConfig } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const BATCH = 20;
const CONVERSATIONS = 5;

type Times = { p50: number; p95: number };
type Row = [string, string, string, string, string, string];
const rows: Row[] = [];

async function main(): Promise<void> {
  const db = await createScratchDatabase('bench_rpc', ADMIN_URL);
  const config = benchConfig(ADMIN_KEY, {
    DATABASE_URL: db.url,
    NATS_URL,
  });
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: false }),
    config,
    createLogger({ level: 'silent' }),
  );
  let nc: NatsConnection | null = null;
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const ids = await conversations(app.get<EventStore>(EVENT_STORE), app.get(ProjectionsService));
    // The 20 queries: each conversation, and its messages, twice over.
    const calls = Array.from({ length: BATCH }, (_, n) => ({
      method: n % 2 === 0 ? 'findConversation' : 'getConversationMessages',
      conversationId: ids[Math.floor(n / 2) % ids.length]!,
    }));
    nc = await connect({ servers: NATS_URL });
    await measure('HTTP', rpcOverHttp(url), calls, restOf(url));
    await measure(`NATS`, rpcOverNats(nc, `${config.prefix}.rpc`), calls);
    printTable();
  } finally {
    await nc?.close();
    await app.close();
    await db.drop();
  }
}

/** Conversations appended as a finished turn leaves them, once every read model shows them. */
async function conversations(store: EventStore, projections: ProjectionsService): Promise<string[]> {
  const ids = Array.from({ length: CONVERSATIONS }, () => randomUUID());
  let last = '';
  for (const id of ids) {
    const events = toAppend(conversationScript(id, { owner: 'admin', snapshot: snapshotFixture() }));
    last = (await store.append(streamIdOf(id), events, { expected: 'no_stream' })).position;
  }
  if (!(await projections.waitForPosition(last, 30_000))) throw new Error('the read models did not catch up');
  return ids;
}

type Call = { method: string; conversationId: string };
type Send = (message: unknown) => Promise<unknown>;

function rpcOverHttp(url: string): Send {
  return async (message) => {
    const res = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify(message),
    });
    if (res.status !== 200) throw new Error(`POST /rpc: ${res.status} ${await res.text()}`);
    return res.json();
  };
}

function rpcOverNats(nc: NatsConnection, subject: string): Send {
  const h = headers();
  h.set('authorization', `Bearer ${ADMIN_KEY}`);
  return async (message) =>
    (await nc.request(subject, JSON.stringify(message), { headers: h, timeout: 10_000 })).json();
}

/** The same query as a plain GET of its route. */
function restOf(url: string): (call: Call) => Promise<void> {
  return async ({ method, conversationId }) => {
    const path = `/api/v1/conversations/${conversationId}${method === 'findConversation' ? '' : '/messages'}`;
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  };
}

const request = (call: Call, id: number) => ({
  jsonrpc: '2.0',
  id,
  method: call.method,
  params: { conversationId: call.conversationId },
});

function check(answer: unknown): void {
  const responses = Array.isArray(answer) ? answer : [answer];
  const failed = responses.find((r: { error?: unknown }) => r.error);
  if (failed) throw new Error(`a call failed: ${JSON.stringify(failed)}`);
}

async function measure(door: string, send: Send, calls: Call[], rest?: (call: Call) => Promise<void>): Promise<void> {
  const scenarios: [string, () => Promise<void>][] = [
    ['batch of 20 in one request', async () => check(await send(calls.map(request)))],
    [
      '20 single requests, one after another',
      async () => {
        for (const [n, call] of calls.entries()) check(await send(request(call, n)));
      },
    ],
    [
      '20 single requests, all at once',
      async () => void (await Promise.all(calls.map(async (call, n) => check(await send(request(call, n)))))),
    ],
  ];
  if (rest) {
    scenarios.push([
      '20 plain GETs, one after another',
      async () => {
        for (const call of calls) await rest(call);
      },
    ]);
    scenarios.push(['20 plain GETs, all at once', async () => void (await Promise.all(calls.map(rest)))]);
  }
  let batch: Times | null = null;
  for (const [name, run] of scenarios) {
    for (let i = 0; i < WARMUP; i++) await run();
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < ROUNDS; i++) {
      const begun = performance.now();
      await run();
      times.push(performance.now() - begun);
    }
    const queriesPerSecond = (ROUNDS * BATCH) / ((performance.now() - started) / 1000);
    const p = percentiles(times);
    batch ??= p;
    const r: Row = [
      door,
      name,
      p.p50.toFixed(2),
      p.p95.toFixed(2),
      Math.round(queriesPerSecond).toLocaleString('en-US'),
      (p.p50 / batch.p50).toFixed(2),
    ];
    rows.push(r);
    process.stdout.write(`${r.join(' | ')}\n`);
  }
}

function percentiles(values: number[]): Times {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

function printTable(): void {
  const head = ['door', 'the same 20 queries as', 'p50 ms', 'p95 ms', 'queries/s', 'p50 ÷ batch p50'];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|---|---|---:|---:|---:|---:|\n`);
  for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

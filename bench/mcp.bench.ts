/**
 * MCP benchmark: a query as an MCP `tools/call` through Parley's `/mcp` (the SDK's client over
 * streamable HTTP, one session) beside the same query as a plain HTTP GET of its route and as a
 * JSON-RPC request on `POST /rpc`, in one run against one server. The all-in-one server
 * (`AppModule`, no turn worker) runs in this process on a fresh database, dropped at the end; the
 * conversations are appended straight through the event store (`conversationScript`).
 * Run with `npm run bench:mcp`; results are recorded in bench/README.md and bench/history.md.
 */
import 'reflect-metadata';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes, randomUUID } from 'node:crypto';
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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const CONVERSATIONS = 5;

type Row = [string, string, string, string, string];

async function main(): Promise<void> {
  const db = await createScratchDatabase('bench_mcp', ADMIN_URL);
  const config = benchConfig(ADMIN_KEY, {
    DATABASE_URL: db.url,
    NATS_URL,
  });
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: false }),
    config,
    createLogger({ level: 'silent' }),
  );
  const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const ids = await conversations(app.get<EventStore>(EVENT_STORE), app.get(ProjectionsService));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ADMIN_KEY}` } },
      }),
    );
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };
    const ways: [string, (id: string) => Promise<void>][] = [
      [
        'HTTP GET /api/v1/conversations/{id}',
        async (id) => {
          const res = await fetch(`${url}/api/v1/conversations/${id}`, { headers: auth });
          const body = (await res.json()) as { conversationUuid?: string };
          if (res.status !== 200 || body.conversationUuid !== id) throw new Error(`GET: ${res.status}`);
        },
      ],
      [
        'JSON-RPC POST /rpc findConversation',
        async (id) => {
          const res = await fetch(`${url}/rpc`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'findConversation', params: { conversationId: id } }),
          });
          const body = (await res.json()) as { result?: { conversationUuid?: string } };
          if (body.result?.conversationUuid !== id) throw new Error(`POST /rpc: ${JSON.stringify(body)}`);
        },
      ],
      [
        'MCP tools/call findConversation on /mcp',
        async (id) => {
          const result = await client.callTool({ name: 'findConversation', arguments: { conversationId: id } });
          const found = (result.structuredContent as { result?: { conversationUuid?: string } }).result;
          if (result.isError || found?.conversationUuid !== id)
            throw new Error(`tools/call: ${JSON.stringify(result)}`);
        },
      ],
    ];
    const rows: Row[] = [];
    let base = 0;
    for (const [name, run] of ways) {
      for (let i = 0; i < WARMUP; i++) await run(ids[i % ids.length]!);
      const times: number[] = [];
      const started = performance.now();
      for (let i = 0; i < ROUNDS; i++) {
        const begun = performance.now();
        await run(ids[i % ids.length]!);
        times.push(performance.now() - begun);
      }
      const perSecond = ROUNDS / ((performance.now() - started) / 1000);
      const p = percentiles(times);
      base ||= p.p50;
      const r: Row = [
        name,
        p.p50.toFixed(2),
        p.p95.toFixed(2),
        Math.round(perSecond).toLocaleString('en-US'),
        (p.p50 / base).toFixed(2),
      ];
      rows.push(r);
      process.stdout.write(`${r.join(' | ')}\n`);
    }
    const head = ['the same query as', 'p50 ms', 'p95 ms', 'queries/s', 'p50 ÷ HTTP p50'];
    process.stdout.write(`\n| ${head.join(' | ')} |\n|---|---:|---:|---:|---:|\n`);
    for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
  } finally {
    await client.close().catch(() => undefined);
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

function percentiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

/**
 * Generate benchmark: what `POST /internal/llm/generate` adds on top of the model (seed 004 §10.1:
 * overhead ≤ 30 ms; Parley's target p95 ≤ 10 ms at 1 caller). The all-in-one server runs in this
 * process, configured by environment alone (LLM_RUNTIME_URL to the simulator in a process of its
 * own, zero latency; MCP_PROXY_URL to server-everything over streamable HTTP), on a fresh database.
 * Callers in this process post generate requests at 1 and 50 at once, plain and with one MCP tool
 * step; then, in the same process, the bare baseline does the same work without Parley: the very
 * model requests Parley sent, replayed with the bare `openai` SDK (streamed to the end), and for
 * the tool step the same `echo` call with the bare MCP SDK client in between. Added = a call's
 * time less the baseline's p50. Run with `npm run bench:generate`; results are recorded in
 * bench/README.md and bench/history.md. BENCH_CALLS (default 200) calls per scenario after
 * BENCH_WARMUP (default: 20, and at least two per caller). BENCH_CPU_PROFILE=<dir> writes a CPU profile of each scenario's
 * measured calls (turn-bench-support's startProfile). BENCH_ONLY=02 runs some scenarios (their indexes in SCENARIOS_ALL);
 * BENCH_STEPS=1 prints, for each scenario of
 * one caller, each step of a call (SQL statements, Redis commands, model requests) with its p50
 * and p95; BENCH_TIMELINE=1 the timelines of the calls nearest the median.
 */
import 'reflect-metadata';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../libs/auth/src';
import { createLogger } from '../libs/observability/src';
import { freePort, killProcess, startEverythingHttp } from '../libs/testing/src';
import { createHttpApp } from '../libs/transport/src';
import { AppModule } from '../apps/server/src/app.module';
import {
  benchConfig,
  createBenchDatabase,
  clearTimelines,
  percentiles,
  startProfile,
  startSimulatorProcess,
  stepTable,
  traceRequests,
  turnTimelines,
} from './turn-bench-support';

const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const WARMUP = process.env.BENCH_WARMUP ? Number(process.env.BENCH_WARMUP) : null;
const SCENARIOS_ALL = [
  { kind: 'plain', concurrency: 1, content: 'Hello there, how are you today?' },
  { kind: 'one MCP tool step', concurrency: 1, content: 'echo this, please' },
  { kind: 'plain', concurrency: 50, content: 'Hello there, how are you today?' },
  { kind: 'one MCP tool step', concurrency: 50, content: 'echo this, please' },
] as const;
const SCENARIOS = SCENARIOS_ALL.filter((_, i) => (process.env.BENCH_ONLY ?? '0123').includes(String(i)));

/**
 * Runs `call` from `concurrency` loops, back to back, until `warmup + count` calls have started,
 * and returns the times of the last `count` (ms). The loops run through from the warm-up into the
 * measured calls: loops started together on cold caches made a wave whose calls were the slowest
 * tenth of a 50-caller run, a tail of the benchmark's own. `measuring` runs before the first
 * measured call starts (the other loops go on meanwhile).
 */
async function drive(
  concurrency: number,
  warmup: number,
  count: number,
  call: () => Promise<void>,
  measuring: () => Promise<void> | void = () => undefined,
): Promise<number[]> {
  const times: number[] = [];
  let started = 0;
  let onset: Promise<void> | null = null;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < warmup + count) {
        const measured = started++ >= warmup;
        if (measured) await (onset ??= Promise.resolve(measuring()));
        const at = performance.now();
        await call();
        if (measured) times.push(performance.now() - at);
      }
    }),
  );
  return times;
}

async function main(): Promise<void> {
  process.env.BENCH_SIM_ECHO = '1';
  const db = await createBenchDatabase();
  const sim = await startSimulatorProcess();
  const mcpPort = await freePort();
  const everything = await startEverythingHttp('streamableHttp', mcpPort);
  const mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
  const config = benchConfig(ADMIN_KEY, {
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    MAX_RUNNING_TURNS_PER_SUBJECT: '1000',
    LLM_RUNTIME_URL: sim.url,
    DEFAULT_MODEL_NAME: 'sim-chat',
    MCP_PROXY_URL: mcpUrl,
    // The read models on a thread of their own, to compare (unset: the default, off).
    PROJECTOR_THREAD: process.env.PROJECTOR_THREAD,
  });
  const app = await createHttpApp(AppModule.forRoot(config), config, createLogger({ level: 'silent' }));
  const mcp = new Client({ name: 'bench', version: '1.0.0' });
  try {
    traceRequests(
      app.getHttpAdapter().getInstance(),
      (request) => request.method === 'POST' && request.url === '/internal/llm/generate',
      () => undefined,
    );
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/internal/llm/generate`;
    const { key } = await app.get(ApiKeysService).create({ subject: 'svc-bench', roles: ['client'] });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    const openai = new OpenAI({ baseURL: sim.url, apiKey: 'sk-bench', maxRetries: 0 });
    const rows: string[][] = [];
    for (const s of SCENARIOS) {
      const generate = async () => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ mode: 'chat', messages: [{ role: 'user', content: s.content }] }),
        });
        const body = (await res.json()) as { answer?: string; meta?: { tool_steps: number } };
        if (res.status !== 200) throw new Error(`generate answered ${res.status}: ${JSON.stringify(body)}`);
        if (s.kind !== 'plain' && body.meta?.tool_steps !== 1) throw new Error('expected one tool step');
      };
      let first = 0;
      let stopProfile: () => Promise<void> = async () => undefined;
      // At least two calls per loop warm up, so that the measured ones run in a steady state.
      const warmup = WARMUP ?? Math.max(20, 2 * s.concurrency);
      const times = await drive(s.concurrency, warmup, CALLS, generate, async () => {
        first = await sim.requestCount();
        clearTimelines();
        stopProfile = startProfile(`generate-${s.kind}-${s.concurrency}`);
      });
      await stopProfile();
      if (s.concurrency === 1 && process.env.BENCH_STEPS)
        process.stdout.write(`Steps of a call, ${s.kind}, ms (the server's marks):\n${stepTable(false)}\n\n`);
      else if (s.concurrency === 1 && process.env.BENCH_TIMELINE)
        process.stdout.write(
          `${turnTimelines(Number(process.env.BENCH_TIMELINE_N ?? 3), Number(process.env.BENCH_TIMELINE_AT ?? 0.5), false)}\n\n`,
        );
      clearTimelines();
      // One call's model requests as Parley sent them, from the middle of the run.
      const perCall = s.kind === 'plain' ? 1 : 2;
      const sent = await sim.requestsFrom(first);
      const sample = sent.slice(Math.floor(sent.length / 2 / perCall) * perCall).slice(0, perCall);
      const bare = async () => {
        for (const [i, body] of sample.entries()) {
          if (i === 1) await mcp.callTool({ name: 'echo', arguments: { message: 'bench' } });
          const stream = await openai.chat.completions.create({
            ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
            stream: true,
          });
          for await (const _chunk of stream);
        }
      };
      const baseline = await drive(s.concurrency, warmup, CALLS, bare);
      const base = percentiles(baseline);
      const parley = percentiles(times);
      const added = percentiles(times.map((t) => t - base.p50));
      rows.push([
        `generate, ${s.kind}, ${s.concurrency} concurrent`,
        String(times.length),
        ms(base),
        ms(parley),
        ms(added),
      ]);
      process.stdout.write(`${rows.at(-1)!.join(' | ')}\n`);
    }
    const head = ['scenario', 'calls', 'bare SDK ms p50/p95/p99', 'generate ms p50/p95/p99', 'added ms p50/p95/p99'];
    process.stdout.write(`\n| ${head.join(' | ')} |\n|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|\n`);
    for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
  } finally {
    await mcp.close().catch(() => undefined);
    await app.close();
    sim.close();
    await killProcess(everything);
    await db.drop();
  }
}

const ms = (p: { p50: number; p95: number; p99: number }) =>
  `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} / ${p.p99.toFixed(1)}`;

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

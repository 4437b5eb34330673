import OpenAI from 'openai';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { createScratchDatabase } from '../libs/testing/src';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Every SQL statement this process sends, whichever pool sends it (the event store's, TypeORM's):
 * pg_stat_statements needs shared_preload_libraries, which a stock server does not set.
 */
export const countStatements = { total: 0, redis: 0, byText: new Map<string, number>() };
const query = Client.prototype.query as (...args: unknown[]) => unknown;
Client.prototype.query = function (this: Client, ...args: unknown[]) {
  countStatements.total++;
  const first = args[0] as string | { text?: string; name?: string };
  const text = (typeof first === 'string' ? first : (first?.name ?? first?.text ?? '?')).replace(/\s+/g, ' ');
  countStatements.byText.set(text.slice(0, 90), (countStatements.byText.get(text.slice(0, 90)) ?? 0) + 1);
  return query.apply(this, args);
} as typeof Client.prototype.query;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
  countStatements.redis++;
  const command = args[0] as unknown as { name: string; args: unknown[] };
  const what = `redis ${command.name} ${command.name.startsWith('eval') ? String(command.args[2] ?? '').replace(/[0-9a-f-]{36}/g, '<id>') : ''}`;
  countStatements.byText.set(what, (countStatements.byText.get(what) ?? 0) + 1);
  return sendCommand.apply(this, args);
};

export interface SimulatorProcess {
  url: string;
  /** How many requests it has received so far. */
  requestCount(): Promise<number>;
  /** The bodies of the chat requests received from the `from`-th request on. */
  requestsFrom(from: number): Promise<Record<string, unknown>[]>;
  close(): void;
}

/** The simulator (zero latency, demo script) in a child process: bench/simulator-process.ts. */
export function startSimulatorProcess(): Promise<SimulatorProcess> {
  const child = fork(join(__dirname, 'simulator-process.ts'), [], { execArgv: ['-r', './tools/register.js'] });
  const ask = (from: number) =>
    new Promise<{ count: number; bodies: Record<string, unknown>[] }>((resolve) => {
      child.once('message', resolve as (m: unknown) => void);
      child.send({ requestsFrom: from });
    });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the simulator process exited (${code})`)));
    child.once('message', (m: { url: string }) =>
      resolve({
        url: m.url,
        requestCount: async () => (await ask(Number.MAX_SAFE_INTEGER)).count,
        requestsFrom: async (from) => (await ask(from)).bodies,
        close: () => child.disconnect(),
      }),
    );
  });
}

/** A fresh, migrated database, dropped by `drop`. */
export const createBenchDatabase = () => createScratchDatabase('bench_turn', ADMIN_URL);

/**
 * The baseline: `requests` (one turn's model calls, in order) sent straight to the simulator
 * with the bare openai SDK, streamed to the end, from `concurrency` loops (each pausing for
 * `think` before a turn) until `count` turns are done. Returns each turn's milliseconds.
 */
export async function replay(
  baseURL: string,
  requests: Record<string, unknown>[],
  concurrency: number,
  count: number,
  think: () => Promise<void>,
): Promise<number[]> {
  const client = new OpenAI({ baseURL, apiKey: 'sk-bench', maxRetries: 0 });
  const once = async () => {
    for (const body of requests) {
      const stream = await client.chat.completions.create({
        ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
        stream: true,
      });
      for await (const _chunk of stream);
    }
  };
  for (let i = 0; i < concurrency; i++) await once();
  const times: number[] = [];
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        await think();
        const started = performance.now();
        await once();
        times.push(performance.now() - started);
      }
    }),
  );
  return times;
}

export function percentiles(values: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/**
 * With BENCH_CPU_PROFILE=<dir>, records a V8 CPU profile of `run` alone (not the boot or the
 * baseline) into `<dir>/<name>.cpuprofile`, for Chrome DevTools or speedscope.
 */
export async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return run();
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (err, result) => (err ? reject(err) : resolve(result))),
    );
  await post('Profiler.enable');
  await new Promise((resolve) =>
    session.post('Profiler.setSamplingInterval', { interval: 100 }, resolve as () => void),
  );
  await post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

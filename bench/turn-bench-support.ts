import { Redis } from 'ioredis';
import { Client } from 'pg';
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { createScratchDatabase } from '../libs/testing/src';
import type { ClientReply, ClientRequest } from './client-process';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Every SQL statement this process sends, whichever pool sends it (the event store's, TypeORM's):
 * pg_stat_statements needs shared_preload_libraries, which a stock server does not set.
 */
export const countStatements = { total: 0, redis: 0, byText: new Map<string, number>() };
/** Statement texts are listed only with BENCH_SQL=1: normalising every text costs the server CPU. */
const byText = Boolean(process.env.BENCH_SQL);
const count = (what: () => string) => {
  if (!byText) return;
  const text = what();
  countStatements.byText.set(text, (countStatements.byText.get(text) ?? 0) + 1);
};
const query = Client.prototype.query as (...args: unknown[]) => unknown;
Client.prototype.query = function (this: Client, ...args: unknown[]) {
  countStatements.total++;
  count(() => {
    const first = args[0] as string | { text?: string; name?: string };
    return (typeof first === 'string' ? first : (first?.name ?? first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 90);
  });
  return query.apply(this, args);
} as typeof Client.prototype.query;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
  countStatements.redis++;
  count(() => {
    const command = args[0] as unknown as { name: string; args: unknown[] };
    return `redis ${command.name} ${command.name.startsWith('eval') ? String(command.args[2] ?? '').replace(/[0-9a-f-]{36}/g, '<id>') : ''}`;
  });
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

/** The load generator (bench/client-process.ts) in a child process; `ask` sends it one request. */
export function startClientProcess(): Promise<{
  /** `onMeasuring`: called when the client's warm-up is over and the measured turns begin. */
  ask(request: ClientRequest, onMeasuring?: () => void): Promise<ClientReply>;
  close(): void;
}> {
  const child = fork(join(__dirname, 'client-process.ts'), [], { execArgv: ['-r', './tools/register.js'] });
  const waiting = new Map<number, { done(reply: ClientReply): void; onMeasuring?: () => void }>();
  let next = 1;
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the client process exited (${code})`)));
    child.on('message', (reply: ClientReply) => {
      if (reply.id === 0)
        return resolve({
          ask: (request, onMeasuring) =>
            new Promise((done, fail) => {
              const id = next++;
              waiting.set(id, { done: (r) => (r.error ? fail(new Error(r.error)) : done(r)), onMeasuring });
              child.send({ id, ...request });
            }),
          close: () => child.disconnect(),
        });
      const asked = waiting.get(reply.id);
      if (reply.measuring) return asked?.onMeasuring?.();
      asked?.done(reply);
      waiting.delete(reply.id);
    });
  });
}

export function percentiles(values: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/**
 * With BENCH_CPU_PROFILE=<dir>, starts a V8 CPU profile (sampled every BENCH_PROFILE_INTERVAL_US,
 * default 100 µs); the returned function stops it and writes `<dir>/<name>.cpuprofile`, for
 * Chrome DevTools or speedscope. Without it, both do nothing.
 */
export function startProfile(name: string): () => Promise<void> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return async () => undefined;
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  const started = post('Profiler.enable')
    .then(() =>
      post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100) }),
    )
    .then(() => post('Profiler.start'));
  return async () => {
    await started;
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

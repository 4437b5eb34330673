import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { fork } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { loadConfig, type Config } from '../libs/config/src';
import { createLogger, type Logger } from '../libs/observability/src';
import pino from 'pino';
import { createScratchDatabase } from '../libs/testing/src';
import { BENCH_LOG_LEVEL, BENCH_NATS_URL } from './app-process';
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

/**
 * With BENCH_TIMELINE=1 or BENCH_STEPS=1, what the server did and when (`performance.now()`):
 * each SQL statement, Redis command and model request from its start to its end, and the marks
 * the benchmark adds; in all (for one conversation at a time) and per turn request (its scope).
 */
type Mark = { t: number; what: string };
const timeline: Mark[] = [];
const tracing = Boolean(process.env.BENCH_TIMELINE || process.env.BENCH_STEPS);
/**
 * A turn request's scope: the ids of its model requests, the time the server waited on them, and,
 * when tracing, its own marks.
 */
interface TurnScope {
  ids: string[];
  modelMs: number;
  marks: Mark[];
}
const scoped: TurnScope[] = [];
const turnScope = new AsyncLocalStorage<TurnScope>();
const markIn = (scope: TurnScope | null | undefined, what: string) => {
  if (!tracing) return;
  const entry = { t: performance.now(), what };
  timeline.push(entry);
  scope?.marks.push(entry);
};
export const mark = (what: string, scope: TurnScope | null | undefined = turnScope.getStore()) => markIn(scope, what);
const sqlText = (first: unknown) =>
  (typeof first === 'string'
    ? first
    : ((first as { name?: string; text?: string })?.name ?? (first as { text?: string })?.text ?? '?')
  )
    .replace(/\s+/g, ' ')
    .slice(0, 90);

const query = Client.prototype.query as (...args: unknown[]) => unknown;
Client.prototype.query = function (this: Client, ...args: unknown[]) {
  countStatements.total++;
  count(() => sqlText(args[0]));
  if (!tracing) return query.apply(this, args);
  const label = sqlText(args[0]).slice(0, 50);
  const scope = turnScope.getStore();
  mark(`sql> ${label}`, scope);
  const done = () => mark(`sql< ${label}`, scope);
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last] as (...a: unknown[]) => void;
    args[last] = (...a: unknown[]) => (done(), callback(...a));
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) result.then(done, done);
  return result;
} as typeof Client.prototype.query;
const redisText = (command: { name: string; args: unknown[] }) =>
  `redis ${command.name} ${command.name.startsWith('eval') ? String(command.args[2] ?? '').replace(/[0-9a-f-]{36}/g, '<id>') : ''}`;
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
  countStatements.redis++;
  const command = args[0] as unknown as { name: string; args: unknown[]; promise: Promise<unknown> };
  count(() => redisText(command));
  if (tracing) {
    const label = redisText(command).slice(0, 60);
    const scope = turnScope.getStore();
    mark(`${label} >`, scope);
    const done = () => mark(`${label} <`, scope);
    command.promise.then(done, done);
  }
  return sendCommand.apply(this, args);
};
/** Ends a scope's timeline: the reply is written. */
export const endTurnScope = (scope: TurnScope | null | undefined) => markIn(scope, 'http<');
/** Forgets the timelines so far (the warm-up's). */
export const clearTimelines = () => {
  timeline.length = 0;
  scoped.length = 0;
};
/**
 * Enters a new turn scope; `receivedAt`, the request's receipt, starts its timeline. A turn
 * request enters its scope when the server has read it; the turn it starts runs in the same
 * async context (a job started here runs from the command's own call), so its model requests,
 * statements and Redis commands find the scope.
 */
export function enterTurnScope(receivedAt: number): TurnScope {
  const scope: TurnScope = { ids: [], modelMs: 0, marks: tracing ? [{ t: receivedAt, what: 'http>' }] : [] };
  if (tracing) scoped.push(scope);
  turnScope.enterWith(scope);
  return scope;
}
/**
 * Traces the requests `traced` picks on a Fastify server: the receipt marks `http>`, the turn scope
 * is entered once the body is read (its stream events run outside the request's async context),
 * the reply's write marks `http send`, and `served` hears of each request's time as the server saw
 * it (Fastify's elapsedTime) with its scope, which then ends.
 */
export function traceRequests(
  server: FastifyInstance,
  traced: (request: { method: string; url: string }) => boolean,
  served: (elapsedMs: number, scope: TurnScope | undefined) => void,
): void {
  const scopes = new WeakMap<object, TurnScope>();
  const receivedAt = new WeakMap<object, number>();
  server
    .addHook('onRequest', (request, _reply, done) => {
      if (traced(request)) {
        receivedAt.set(request, performance.now());
        mark('http>', null);
      }
      done();
    })
    .addHook('preHandler', (request, _reply, done) => {
      if (traced(request)) scopes.set(request, enterTurnScope(receivedAt.get(request)!));
      done();
    })
    .addHook('onSend', (request, _reply, _payload, done) => {
      if (traced(request)) mark('http send', scopes.get(request));
      done();
    })
    .addHook('onResponse', (request, reply, done) => {
      if (traced(request)) {
        const scope = scopes.get(request);
        served(reply.elapsedTime, scope);
        endTurnScope(scope);
      }
      done();
    });
}

/**
 * Each model request of a turn: the simulator names its response with `x-request-id`, and the
 * server waits on it from the request's creation to its last byte (undici's diagnostics channel).
 */
const modelRequests = new WeakMap<object, { scope: TurnScope; sentAt: number }>();
subscribe('undici:request:create', (m) => {
  const { request } = m as { request: { path: string } };
  const scope = turnScope.getStore();
  if (scope) modelRequests.set(request, { scope, sentAt: performance.now() });
  mark(`model> ${request.path}`, scope);
});
subscribe('undici:request:headers', (m) => {
  const { request, response } = m as { request: object; response: { headers: Buffer[] } };
  const scope = modelRequests.get(request)?.scope;
  const at = response.headers.findIndex((h, i) => i % 2 === 0 && h.toString().toLowerCase() === 'x-request-id');
  if (scope && at >= 0) scope.ids.push(response.headers[at + 1].toString());
  mark('model headers', scope);
});
subscribe('undici:request:trailers', (m) => {
  const sent = modelRequests.get((m as { request: object }).request);
  if (sent) sent.scope.modelMs += performance.now() - sent.sentAt;
  mark('model end', sent?.scope);
});

/** The measured turns' marks, from the server's `http>` to its `http<`; empties the timelines. */
function measuredTurns(concurrent: boolean): Mark[][] {
  const turns: Mark[][] = [];
  if (concurrent) {
    // A turn's scope goes on after its reply (the slot's release, the lease's removal): cut there.
    for (const { marks } of scoped) {
      const end = marks.findIndex((m) => m.what === 'http<');
      if (end > 0) turns.push(marks.slice(0, end + 1));
    }
  } else {
    let current: Mark[] | null = null;
    for (const entry of timeline) {
      if (entry.what === 'http>') current = [];
      current?.push(entry);
      if (entry.what === 'http<' && current) {
        turns.push(current);
        current = null;
      }
    }
  }
  timeline.length = 0;
  scoped.length = 0;
  return turns;
}

const lengthOf = (turn: Mark[]) => turn.at(-1)!.t - turn[0].t;

/**
 * The timelines of the measured turns: the `n` turns nearest the quantile `at` of their length
 * (0.5: the median), each line in ms from the request's receipt. With one conversation at a time,
 * every mark in between (the read models' statements too); with several, each turn's own marks.
 * Empties the timelines.
 */
export function turnTimelines(n: number, at: number, concurrent: boolean): string {
  const sorted = measuredTurns(concurrent).sort((a, b) => lengthOf(a) - lengthOf(b));
  const middle = Math.min(sorted.length - 1, Math.floor(sorted.length * at));
  return sorted
    .slice(Math.max(0, middle - Math.floor(n / 2)), middle + Math.ceil(n / 2))
    .map((turn) => turn.map((e) => `${(e.t - turn[0].t).toFixed(2).padStart(7)}  ${e.what}`).join('\n'))
    .join('\n\n');
}

/**
 * Where the slow turns lose their time: each step of a turn (from one of its own marks to the
 * next) with its p50 and p95, and its mean in the middle fifth of the turns by length against
 * the slowest tenth. A step that grows in the slow turns is where their extra time went. Steps
 * are named by their marks, the n-th repeat of a pair numbered; the lease's reply, which the turn
 * does not wait for, is left out. Empties the timelines.
 */
export function stepTable(concurrent: boolean): string {
  const label = (what: string) =>
    what.replace(/^redis evalsha [^:]+:/, 'redis ').replace(/\/v1\/chat\/completions/, '');
  const steps = measuredTurns(concurrent)
    .sort((a, b) => lengthOf(a) - lengthOf(b))
    .map((turn) => {
      const marks = turn.filter((m) => !/:marker <$/.test(m.what));
      const out = new Map<string, number>();
      for (let i = 1; i < marks.length; i++) {
        const pair = `${label(marks[i - 1].what)} → ${label(marks[i].what)}`;
        let name = pair;
        for (let k = 2; out.has(name); k++) name = `${pair} (${k})`;
        out.set(name, marks[i].t - marks[i - 1].t);
      }
      out.set('whole turn', lengthOf(turn));
      return out;
    });
  const n = steps.length;
  const middle = steps.slice(Math.floor(n * 0.4), Math.floor(n * 0.6));
  const slowest = steps.slice(Math.floor(n * 0.9));
  const mean = (turns: Map<string, number>[], name: string) => {
    const values = turns.map((t) => t.get(name)).filter((v): v is number => v !== undefined);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
  };
  const names = [...new Set(steps.flatMap((t) => [...t.keys()]))];
  const rows = names
    .map((name) => ({ name, values: steps.map((t) => t.get(name)).filter((v): v is number => v !== undefined) }))
    // A step most turns do not take (a rare retry, a statement of another turn) says little.
    .filter(({ values }) => values.length >= n / 2)
    .map(({ name, values }) => {
      const p = percentiles(values);
      const cells = [p.p50, p.p95, mean(middle, name), mean(slowest, name)].map((v) => v.toFixed(2));
      return `| ${name} | ${values.length} | ${cells.join(' | ')} |`;
    });
  return [
    '| step | turns | p50 ms | p95 ms | mean, middle fifth | mean, slowest tenth |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

export interface SimulatorProcess {
  url: string;
  /** How many requests it has received so far. */
  requestCount(): Promise<number>;
  /** The bodies of the chat requests received from the `from`-th request on. */
  requestsFrom(from: number): Promise<Record<string, unknown>[]>;
  /** The simulator's own time on each of these requests (by `x-request-id`), in ms. */
  durations(ids: string[]): Promise<number[]>;
  close(): void;
}

/** The simulator (zero latency, demo script) in a child process: bench/simulator-process.ts. */
export function startSimulatorProcess(): Promise<SimulatorProcess> {
  const child = fork(join(__dirname, 'simulator-process.ts'), [], { execArgv: ['-r', './tools/register.js'] });
  const ask = <T>(question: object) =>
    new Promise<T>((resolve) => {
      child.once('message', resolve as (m: unknown) => void);
      child.send(question);
    });
  type Requests = { count: number; bodies: Record<string, unknown>[] };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the simulator process exited (${code})`)));
    child.once('message', (m: { url: string }) =>
      resolve({
        url: m.url,
        requestCount: async () => (await ask<Requests>({ requestsFrom: Number.MAX_SAFE_INTEGER })).count,
        requestsFrom: async (from) => (await ask<Requests>({ requestsFrom: from })).bodies,
        durations: async (ids) => (await ask<{ durations: number[] }>({ durations: ids })).durations,
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

/**
 * The config of a server a benchmark runs in its own process: a prefix and an encryption key of
 * its own, the admin key its clients use, no logs, and no rate limit (every client of a benchmark
 * comes from one address); `env` adds or overrides settings.
 */
export function benchConfig(adminKey: string, env: Record<string, string | undefined>): Config {
  return loadConfig({
    PARLEY_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PARLEY_ADMIN_API_KEY: adminKey,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
    ...env,
  });
}

/**
 * The settings that put every feature on in a benchmark's server, as production runs it: NATS
 * (the integration relay and live deltas; `BENCH_NATS=0` turns it off) and `LOG_LEVEL` info
 * (`BENCH_LOG_LEVEL` to change).
 */
export function everyFeatureOn(): Record<string, string | undefined> {
  return {
    NATS_URL: process.env.BENCH_NATS === '0' ? undefined : BENCH_NATS_URL,
    LOG_LEVEL: BENCH_LOG_LEVEL,
  };
}

/**
 * The logger of a benchmark's server at its config's level: every line formatted and written, as
 * to a production process's stdout, but into `BENCH_LOG_FILE` (default /dev/null).
 */
export function benchLogger(config: Config): Logger {
  return createLogger(
    { level: config.log.level },
    pino.destination({ dest: process.env.BENCH_LOG_FILE ?? '/dev/null', sync: true }),
  );
}

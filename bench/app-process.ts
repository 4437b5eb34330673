/**
 * A Parley app (apps/<app>/src/main.ts) in a process of its own, as the benchmarks that measure a
 * deployment start it (`node -r ./tools/register.js apps/<app>/src/main.ts`), and the admin calls
 * they make on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../libs/testing/src';

export interface AppProcess {
  name: string;
  child: ChildProcess;
  port: number;
  url: string;
  stderr: string[];
}

export interface AppOptions {
  /** Node options before the entry, after the TypeScript hook (`--expose-gc`, more `-r` modules). */
  execArgv?: string[];
  /** An IPC channel to the process (for a module such as tools/soak/memory-probe.ts). */
  ipc?: boolean;
  /** A file its standard output (its log) is appended to; unset, the output is discarded. */
  logFile?: string;
}

/**
 * Starts apps/<app>/src/main.ts with `env` on a port of its own, with the V8 flags of the start
 * scripts (package.json); resolves once /health/ready answers 200.
 */
export async function startApp(
  name: string,
  app: string,
  env: Record<string, string>,
  options: AppOptions = {},
): Promise<AppProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=32', '-r', './tools/register.js', ...(options.execArgv ?? []), `apps/${app}/src/main.ts`],
    {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: [
        'ignore',
        options.logFile ? openSync(options.logFile, 'a') : 'ignore',
        'pipe',
        ...(options.ipc ? (['ipc'] as const) : []),
      ],
    },
  );
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()) > 50 && stderr.shift());
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr.join('').slice(-2000)}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return { name, child, port, url, stderr };
    if (Date.now() > deadline) throw new Error(`${name} not ready after 90 s: ${stderr.join('').slice(-2000)}`);
    await sleep(250);
  }
}

export async function stopApp(proc: AppProcess): Promise<void> {
  if (proc.child.exitCode !== null) return;
  const exited = once(proc.child, 'exit');
  proc.child.kill('SIGTERM');
  // The fallback's timer must not keep the benchmark alive once the process has exited.
  await Promise.race([exited, sleep(15_000, undefined, { ref: false }).then(() => proc.child.kill('SIGKILL'))]);
}

export async function postJson(url: string, key: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** The NATS a benchmark's Parley uses: the machine's (`NATS_URL` to change). */
export const BENCH_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** The LOG_LEVEL of a benchmark's Parley: `info`, as production runs it (`BENCH_LOG_LEVEL` to change). */
export const BENCH_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

/**
 * The settings of a benchmark's Parley processes: its database, the machine's Redis and NATS, a
 * prefix and an encryption key of its own, the admin key its clients use, and no rate limit
 * (every client of a benchmark comes from one address). Every feature stays on as by default.
 */
export function appEnv(databaseUrl: string, adminKey: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    NATS_URL: BENCH_NATS_URL,
    PARLEY_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PARLEY_ADMIN_API_KEY: adminKey,
    LOG_LEVEL: BENCH_LOG_LEVEL,
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
    MAX_RUNNING_TURNS_PER_SUBJECT: '1000',
  };
}

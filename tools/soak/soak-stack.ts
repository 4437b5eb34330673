/**
 * The processes a soak runs against: the all-in-one server and a second worker (each a child
 * process started as `npm start` and `npm run start:worker` start them), a Redis, a NATS and
 * server-everything of the soak's own on free ports (so restarting them never touches the
 * machine's shared services), a fresh database on the local PostgreSQL, and the simulator.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createScratchDatabase,
  freePort,
  killProcess,
  startEverythingHttp,
  startNatsServer,
  startRedisServer,
  startSimulator,
  waitForHttp,
  type Simulator,
  type TestDatabase,
} from '../../libs/testing/src';
import { soakRules } from './soak-script';

const ROOT = join(__dirname, '..', '..');
const ADMIN_URL = process.env.PARLEY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ParleyProcess {
  child: ChildProcess;
  url: string;
  /** The last lines it wrote to stderr (its warnings and errors). */
  output(): string;
}

export interface SoakStack {
  adminKey: string;
  prefix: string;
  db: TestDatabase;
  simulator: Simulator;
  redisPort: number;
  natsPort: number;
  mcpPort: number;
  server: ParleyProcess;
  worker: ParleyProcess | null;
  /** SIGKILLs the second worker and starts it again. */
  restartWorker(): Promise<void>;
  /** Stops the soak's Redis (SIGKILL: what it held is gone) and starts it again on its port. */
  restartRedis(): Promise<void>;
  restartNats(): Promise<void>;
  /** SIGKILLs server-everything and starts it again after `downMs`. */
  restartMcp(downMs: number): Promise<void>;
  /** Resident set size of the server process, in bytes (from /proc). */
  serverRss(): number;
  /** The server's memory after a full garbage collection (tools/soak/memory-probe.ts). */
  serverMemory(): Promise<NodeJS.MemoryUsage>;
  /** Writes a heap snapshot of the server at `path` (blocks the server while it writes). */
  serverHeapSnapshot(path: string): Promise<void>;
  close(): Promise<void>;
}

/** Resident set size of `pid` in bytes, from /proc (0 when gone). */
export function rssOf(pid: number): number {
  try {
    const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function startParleyProcess(
  entry: string,
  env: Record<string, string>,
  port: number,
  execArgv: string[] = [],
): Promise<ParleyProcess> {
  const child = spawn(
    process.execPath,
    [...execArgv, '-r', './tools/register.js', '-r', './tools/soak/memory-probe.ts', entry],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + String(d)).slice(-8000)));
  const url = `http://127.0.0.1:${port}`;
  const output = () => err;
  for (const deadline = Date.now() + 60_000; ;) {
    const res = await waitForHttp(`${url}/health/ready`, child, output, 60_000);
    if (res.status === 200) break;
    if (Date.now() > deadline) throw new Error(`${entry} not ready: ${res.status}\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, url, output };
}

/** One IPC question to a Parley process's memory probe (tools/soak/memory-probe.ts), and its answer. */
export function askMemoryProbe<T>(child: ChildProcess, question: { probe: string; path?: string }): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { probe?: string }) => {
      if (m?.probe !== question.probe) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = () => {
      child.off('message', onMessage);
      reject(new Error('the server exited'));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(question);
  });
}

export interface StackOptions {
  /** Start a second worker process (one the soak kills). */
  worker: boolean;
  /** Extra settings of both Parley processes. */
  env?: Record<string, string>;
}

export async function startSoakStack(options: StackOptions): Promise<SoakStack> {
  const adminKey = `pk_soak_${randomBytes(16).toString('hex')}`;
  const prefix = `soak${randomBytes(4).toString('hex')}`;
  const [redisPort, natsPort, mcpPort, serverPort, workerPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const db = await createScratchDatabase('soak', ADMIN_URL);
  const simulator = await startSimulator({ rules: soakRules, latencyMs: 0 });
  let redis = await startRedisServer(redisPort);
  let nats = await startNatsServer(natsPort);
  let mcp: ChildProcess | null = await startEverythingHttp('streamableHttp', mcpPort);
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    PARLEY_PREFIX: prefix,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PARLEY_ADMIN_API_KEY: adminKey,
    LOG_LEVEL: 'error',
    // Every client of the soak, and its readiness probes, come from one address.
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
    MAX_RUNNING_TURNS_PER_SUBJECT: '1000',
    // A killed worker's turn is taken over within seconds, not the default 30.
    QUEUE_LOCK_MS: '3000',
    ...options.env,
  };
  const server = await startParleyProcess('apps/server/src/main.ts', env, serverPort, ['--expose-gc']);
  const startWorker = () => startParleyProcess('apps/worker/src/main.ts', env, workerPort);
  let worker = options.worker ? await startWorker() : null;
  const stack: SoakStack = {
    adminKey,
    prefix,
    db,
    simulator,
    redisPort,
    natsPort,
    mcpPort,
    server,
    get worker() {
      return worker;
    },
    restartWorker: async () => {
      if (!worker) return;
      await killProcess(worker.child);
      worker = await startWorker();
    },
    restartRedis: async () => {
      await killProcess(redis);
      await new Promise((r) => setTimeout(r, 1000));
      redis = await startRedisServer(redisPort);
    },
    restartNats: async () => {
      await killProcess(nats);
      await new Promise((r) => setTimeout(r, 1000));
      nats = await startNatsServer(natsPort);
    },
    restartMcp: async (downMs) => {
      if (mcp) await killProcess(mcp);
      mcp = null;
      await new Promise((r) => setTimeout(r, downMs));
      mcp = await startEverythingHttp('streamableHttp', mcpPort);
    },
    serverRss: () => rssOf(server.child.pid!),
    serverMemory: () =>
      askMemoryProbe<{ usage: NodeJS.MemoryUsage }>(server.child, { probe: 'memory' }).then((m) => m.usage),
    serverHeapSnapshot: (path) => askMemoryProbe(server.child, { probe: 'snapshot', path }).then(() => undefined),
    close: async () => {
      const stop = async (p: ChildProcess | null | undefined) => {
        if (!p || p.exitCode !== null || p.signalCode !== null) return;
        p.kill('SIGTERM');
        const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
        await once(p, 'exit');
        clearTimeout(timer);
      };
      await Promise.all([stop(server.child), stop(worker?.child)]);
      await Promise.all([killProcess(redis), killProcess(nats), mcp ? killProcess(mcp) : undefined]);
      await simulator.close();
      await db.drop();
    },
  };
  return stack;
}

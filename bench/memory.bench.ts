/**
 * Memory benchmark (`npm run bench:memory`): the all-in-one server (apps/server) in a process of
 * its own, every feature on as by default (auth, metrics, projections, the relay, NATS, content
 * sealing; LOG_LEVEL `info`, its output discarded), on a fresh database, against the simulator at
 * zero latency in a process of its own.
 *
 * 1. *Over many turns*: BENCH_MEMORY_CONVERSATIONS (50) closed loops of plain turns, each
 *    conversation BENCH_MEMORY_TURNS_PER_CONVERSATION (10) turns after its first, then a new
 *    conversation, until BENCH_MEMORY_TURNS (100,000) turns are done. About every
 *    BENCH_MEMORY_TURNS / BENCH_MEMORY_SAMPLES (20) turns: the server's RSS (/proc/<pid>/status,
 *    read at once) and its heap after a full GC (tools/soak/memory-probe.ts, loaded with
 *    `--expose-gc`: the probe runs in the benchmark's child only, never in a deployment). The
 *    verdict: over the second half, the largest and smallest RSS against its mean (target
 *    within ±10 %), and the slope of a least-squares line (MiB per 10,000 turns).
 * 2. *Idle conversations*: a new server on the same database, warmed by one round of the loops,
 *    then BENCH_MEMORY_IDLE (1000,5000) conversations created in turn, each with one turn (its
 *    folded state then sits in the conversation cache, CONVERSATION_CACHE_MB), left idle. Before
 *    and after each step: ten full GCs, BENCH_MEMORY_SETTLE_MS (10 s), then BENCH_MEMORY_READINGS (5)
 *    readings a second apart of the heap and the RSS after a full GC; their medians give MiB per
 *    1,000 idle conversations.
 * BENCH_MEMORY_TURNS=0 or BENCH_MEMORY_IDLE empty skips the one scenario or the other.
 *
 * BENCH_MEMORY_LOG=<file>: the servers' logs are appended there (otherwise discarded).
 * BENCH_MEMORY_HEAP_SNAPSHOTS=<dir>: heap snapshots of the server at half and at the end of the
 * turns, written there, and the constructors that grew most between them.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createScratchDatabase } from '../libs/testing/src';
import { testCatalog } from '../test/support/test-catalog';
import { heapBytes, heapGrowth, heapTotals } from '../tools/soak/heap-diff';
import { askMemoryProbe, rssOf } from '../tools/soak/soak-stack';
import { appEnv, postJson, startApp, stopApp, type AppProcess } from './app-process';
import { startClientProcess, startSimulatorProcess } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TOTAL_TURNS = Number(process.env.BENCH_MEMORY_TURNS ?? 100_000);
const CONVERSATIONS = Number(process.env.BENCH_MEMORY_CONVERSATIONS ?? 50);
const TURNS_PER_CONVERSATION = Number(process.env.BENCH_MEMORY_TURNS_PER_CONVERSATION ?? 10);
const SAMPLES = Number(process.env.BENCH_MEMORY_SAMPLES ?? 20);
/** Empty: no idle-conversation scenario. */
const IDLE_STEPS = (process.env.BENCH_MEMORY_IDLE ?? '1000,5000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const SETTLE_MS = Number(process.env.BENCH_MEMORY_SETTLE_MS ?? 10_000);
const SNAPSHOT_DIR = process.env.BENCH_MEMORY_HEAP_SNAPSHOTS;
const READINGS = Number(process.env.BENCH_MEMORY_READINGS ?? 5);
const CONTENT = 'Hello there, how are you today?';
const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const MIB = 1024 * 1024;
/** The servers the benchmark is stopping itself. */
const stopping = new Set<AppProcess>();

type BenchClient = Awaited<ReturnType<typeof startClientProcess>>;

interface Reading {
  rssMib: number;
  /** After a full GC. */
  heapUsedMib: number;
  heapTotalMib: number;
  externalMib: number;
}

interface Sample extends Reading {
  turns: number;
  conversations: number;
  turnsPerSecond: number;
}

/**
 * The heap after a full GC (the probe's answer), and the RSS as it stands before it (under load)
 * or, with `rssAfterGc`, after it (idle: the pages the collection gave back do not count).
 */
async function read(server: AppProcess, rssAfterGc = false): Promise<Reading> {
  const before = rssOf(server.child.pid!);
  const { usage } = await askMemoryProbe<{ usage: NodeJS.MemoryUsage }>(server.child, { probe: 'memory' });
  return {
    rssMib: (rssAfterGc ? rssOf(server.child.pid!) : before) / MIB,
    heapUsedMib: usage.heapUsed / MIB,
    heapTotalMib: usage.heapTotal / MIB,
    externalMib: usage.external / MIB,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** After 2 × READINGS full GCs and SETTLE_MS without load, the median of READINGS readings a second apart. */
async function settled(server: AppProcess): Promise<Reading> {
  for (let i = 0; i < 2 * READINGS; i++) {
    await read(server);
    await sleep(200);
  }
  await sleep(SETTLE_MS);
  const readings: Reading[] = [];
  for (let i = 0; i < READINGS; i++) {
    if (i > 0) await sleep(1000);
    readings.push(await read(server, true));
  }
  const of = (k: keyof Reading) => median(readings.map((r) => r[k]));
  return {
    rssMib: of('rssMib'),
    heapUsedMib: of('heapUsedMib'),
    heapTotalMib: of('heapTotalMib'),
    externalMib: of('externalMib'),
  };
}

/** Starts the server (with the memory probe) and puts the catalog and a client key in; the key. */
async function startServer(env: Record<string, string>, simUrl: string): Promise<{ server: AppProcess; key: string }> {
  const server = await startApp('server', 'server', env, {
    execArgv: ['--expose-gc', '-r', './tools/soak/memory-probe.ts'],
    ipc: true,
    logFile: process.env.BENCH_MEMORY_LOG,
  });
  server.child.once('exit', (code, signal) => {
    if (!stopping.has(server))
      process.stderr.write(`the server exited during the run (${signal ?? code})\n${server.stderr.join('')}\n`);
  });
  await postJson(`${server.url}/api/v1/catalog/apply`, ADMIN_KEY, testCatalog(simUrl));
  const { key } = (await postJson(`${server.url}/api/v1/keys`, ADMIN_KEY, {
    subject: 'svc-bench',
    roles: ['client'],
  })) as { key: string };
  return { server, key };
}

/**
 * `count` new conversations, `width` at a time, each with one turn and then `turnsAfter` more,
 * one after another; the closed loops of the client process.
 */
async function conversations(
  client: BenchClient,
  url: string,
  key: string,
  count: number,
  width: number,
  turnsAfter: number,
): Promise<void> {
  for (let left = count; left > 0; left -= width) {
    const n = Math.min(width, left);
    const ids = await Promise.all(
      Array.from(
        { length: n },
        async () => (await client.ask({ kind: 'create', url, key, count: 1, actionCode: 'CHAT' })).ids![0],
      ),
    );
    await client.ask({
      kind: 'turns',
      url,
      key,
      lanes: ids.map((id) => [id]),
      content: CONTENT,
      turnsPerConversation: turnsAfter,
      paced: false,
    });
  }
}

async function overTurns(client: BenchClient, server: AppProcess, key: string): Promise<Sample[]> {
  const perConversation = 1 + TURNS_PER_CONVERSATION;
  const every = TOTAL_TURNS / SAMPLES;
  const samples: Sample[] = [{ turns: 0, conversations: 0, turnsPerSecond: 0, ...(await read(server)) }];
  print(samples.slice(-1), true);
  let turns = 0;
  let opened = 0;
  let since = { turns: 0, at: performance.now() };
  let halfSnapshot: string | null = null;
  while (turns < TOTAL_TURNS) {
    const n = Math.min(CONVERSATIONS, Math.ceil((TOTAL_TURNS - turns) / perConversation));
    await conversations(client, server.url, key, n, CONVERSATIONS, TURNS_PER_CONVERSATION);
    turns += n * perConversation;
    opened += n;
    if (turns >= samples.at(-1)!.turns + every || turns >= TOTAL_TURNS) {
      const turnsPerSecond = (turns - since.turns) / ((performance.now() - since.at) / 1000);
      samples.push({ turns, conversations: opened, turnsPerSecond, ...(await read(server)) });
      print(samples.slice(-1), false);
      since = { turns, at: performance.now() };
    }
    if (SNAPSHOT_DIR && halfSnapshot === null && turns >= TOTAL_TURNS / 2)
      halfSnapshot = await snapshot(server, 'half');
  }
  if (halfSnapshot) printGrowth(halfSnapshot, await snapshot(server, 'end'));
  return samples;
}

async function snapshot(server: AppProcess, name: string): Promise<string> {
  mkdirSync(SNAPSHOT_DIR!, { recursive: true });
  const path = join(SNAPSHOT_DIR!, `server-${name}.heapsnapshot`);
  await askMemoryProbe(server.child, { probe: 'snapshot', path });
  return path;
}

function printGrowth(before: string, after: string): void {
  const [a, b] = [heapTotals(before), heapTotals(after)];
  const out = [
    `\nheap snapshots (own sizes), half → end: ${(heapBytes(a) / MIB).toFixed(1)} → ${(heapBytes(b) / MIB).toFixed(1)} MiB`,
    '| constructor | objects added | KiB added | objects at the end |',
    '|---|---:|---:|---:|',
    ...heapGrowth(a, b)
      .slice(0, 15)
      .map((d) => `| ${d.name.slice(0, 60)} | ${d.count} | ${(d.bytes / 1024).toFixed(0)} | ${d.total} |`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

function print(samples: Sample[], head: boolean): void {
  const out: string[] = [];
  if (head)
    out.push(
      '\n| turns done | conversations | turns/s | RSS MiB | heap used MiB, after GC | heap total MiB | external MiB |',
      '|---:|---:|---:|---:|---:|---:|---:|',
    );
  for (const s of samples)
    out.push(
      `| ${[
        s.turns,
        s.conversations,
        s.turnsPerSecond.toFixed(0),
        s.rssMib.toFixed(1),
        s.heapUsedMib.toFixed(1),
        s.heapTotalMib.toFixed(1),
        s.externalMib.toFixed(1),
      ].join(' | ')} |`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Over the second half: the extremes against the mean, and the least-squares slope per 10,000 turns. */
function drift(samples: Sample[], of: (s: Sample) => number): string {
  const half = samples.filter((s) => s.turns >= TOTAL_TURNS / 2);
  const ys = half.map(of);
  const mean = ys.reduce((a, b) => a + b, 0) / ys.length;
  const xMean = half.reduce((a, s) => a + s.turns, 0) / half.length;
  const sxy = half.reduce((a, s, i) => a + (s.turns - xMean) * (ys[i] - mean), 0);
  const sxx = half.reduce((a, s) => a + (s.turns - xMean) ** 2, 0);
  const slope = sxx > 0 ? (sxy / sxx) * 10_000 : 0;
  const pct = (v: number) => `${v >= mean ? '+' : ''}${(((v - mean) / mean) * 100).toFixed(1)} %`;
  return `mean ${mean.toFixed(1)} MiB, max ${pct(Math.max(...ys))}, min ${pct(Math.min(...ys))}, slope ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MiB per 10k turns (${half.length} samples)`;
}

function verdict(samples: Sample[]): void {
  const half = samples.filter((s) => s.turns >= TOTAL_TURNS / 2).map((s) => s.rssMib);
  const mean = half.reduce((a, b) => a + b, 0) / half.length;
  const within = half.every((v) => Math.abs(v - mean) <= mean * 0.1);
  process.stdout.write(
    [
      '',
      `second half RSS: ${drift(samples, (s) => s.rssMib)}; within ±10 %: ${within ? 'yes' : 'no'}`,
      `second half heap used after GC: ${drift(samples, (s) => s.heapUsedMib)}`,
      '',
    ].join('\n'),
  );
}

async function idle(client: BenchClient, server: AppProcess, key: string): Promise<void> {
  // Warm: one round of the loops (JIT, pooled connections, the catalog's caches).
  await conversations(client, server.url, key, CONVERSATIONS, CONVERSATIONS, TURNS_PER_CONVERSATION);
  let before = await settled(server);
  let cached = 0;
  const out = [
    '\n| idle conversations added | cached after | RSS MiB before → after | heap used MiB before → after | RSS MiB per 1,000 | heap used MiB per 1,000 |',
    '|---:|---:|---:|---:|---:|---:|',
  ];
  for (const step of IDLE_STEPS) {
    await conversations(client, server.url, key, step, CONVERSATIONS, 0);
    cached += step;
    const after = await settled(server);
    const per = (k: keyof Reading) => (((after[k] - before[k]) / step) * 1000).toFixed(2);
    out.push(
      `| ${step} | ${cached} | ${before.rssMib.toFixed(1)} → ${after.rssMib.toFixed(1)} | ${before.heapUsedMib.toFixed(1)} → ${after.heapUsedMib.toFixed(1)} | ${per('rssMib')} | ${per('heapUsedMib')} |`,
    );
    before = after;
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main(): Promise<void> {
  process.stdout.write(`load average at start: ${loadAverage()}\n`);
  const sim = await startSimulatorProcess();
  const client = await startClientProcess();
  const db = await createScratchDatabase('bench_memory', ADMIN_URL);
  const env = appEnv(db.url, ADMIN_KEY);
  try {
    if (TOTAL_TURNS > 0) {
      const first = await startServer(env, sim.url);
      try {
        process.stdout.write(
          `\n${TOTAL_TURNS} plain turns, ${CONVERSATIONS} conversations at a time, ${1 + TURNS_PER_CONVERSATION} turns each, CONVERSATION_CACHE_MB ${process.env.CONVERSATION_CACHE_MB ?? 'as by default'}`,
        );
        verdict(await overTurns(client, first.server, first.key));
      } finally {
        stopping.add(first.server);
        await stopApp(first.server);
      }
    }
    if (IDLE_STEPS.length > 0) {
      const second = await startServer(env, sim.url);
      try {
        await idle(client, second.server, second.key);
      } finally {
        stopping.add(second.server);
        await stopApp(second.server);
      }
    }
    process.stdout.write(`load average at end: ${loadAverage()}\n`);
  } finally {
    client.close();
    sim.close();
    await db.drop();
  }
}

const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

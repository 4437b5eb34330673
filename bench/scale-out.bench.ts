/**
 * Scale-out benchmark (`npm run bench:scale-out`, issue 28): Parley split across processes on
 * this machine — two command APIs, two workers and one projector (apps/*, each started as
 * `node -r ./tools/register.js apps/<app>/src/main.ts`), with Redis and NATS and one database —
 * under a closed-loop load of BENCH_CONVERSATIONS (50) conversations of plain turns, each sending
 * its next turn as soon as the last one answered, the loops spread over both command APIs. Then
 * the all-in-one server (apps/server) in a process of its own, with the same settings on a
 * database of its own, under the same load, in the same run.
 *
 * Prints each deployment's turns/s and turn times, whether anything was lost (every acknowledged
 * command's turn has its events in the store: `TurnStarted`, and the user's and the model's
 * `MessageRecorded`; and the projector's `rm_messages` rows), and each process's CPU per turn
 * (from /proc/<pid>/stat) beside PostgreSQL's, with the database's commits and rows written per
 * turn (pg_stat_database, this database's alone). Each conversation has
 * BENCH_TURNS_PER_CONVERSATION (10) turns after one warm-up turn, and each loop goes on with a new
 * conversation until about BENCH_TURNS (1,000) turns are done. BENCH_LOG_LEVEL sets the
 * processes' LOG_LEVEL (default `info`, as `bench:turn` runs its server: every feature on; their
 * output is discarded).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createScratchDatabase } from '../libs/testing/src';
import { testCatalog } from '../test/support/test-catalog';
import { appEnv, postJson, startApp, stopApp, type AppProcess as Proc } from './app-process';
import { postgresCpu, processCpuMs } from './process-cpu';
import { percentiles, startClientProcess, startSimulatorProcess } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 50);
const TURNS_PER_CONVERSATION = Number(process.env.BENCH_TURNS_PER_CONVERSATION ?? 10);
const TOTAL_TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const CONTENT = 'Hello there, how are you today?';
/** After the last reply: the projector's last rows, and pg_stat_database's flush (about 1 s). */
const SETTLE_MS = 1500;
const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;

type BenchClient = Awaited<ReturnType<typeof startClientProcess>>;

interface DeploymentResult {
  name: string;
  turns: number;
  turnsPerSecond: number;
  times: number[];
  /** Acknowledged turn commands (the warm-up's too), and those whose turn's events are all stored. */
  acknowledged: number;
  stored: { turnStarted: number; messages: number; projected: number };
  conversationsShort: number;
  processes: { name: string; cpuMs: number }[];
  pgCpuMs: number;
  commits: number;
  rowsWritten: number;
  wallSeconds: number;
}

/**
 * Drives the closed loop against the command APIs at `urls` (the loops spread over them) and
 * reads the counters of `processes` and of the database around the measured part.
 */
async function drive(
  name: string,
  client: BenchClient,
  urls: string[],
  databaseUrl: string,
  processes: Proc[],
  simUrl: string,
): Promise<DeploymentResult> {
  const api = urls[0];
  await postJson(`${api}/api/v1/catalog/apply`, ADMIN_KEY, testCatalog(simUrl));
  const { key } = (await postJson(`${api}/api/v1/keys`, ADMIN_KEY, { subject: 'svc-bench', roles: ['client'] })) as {
    key: string;
  };
  const perLane = Math.max(1, Math.ceil(TOTAL_TURNS / (CONVERSATIONS * TURNS_PER_CONVERSATION)));
  const lanes: string[][] = [];
  for (let i = 0; i < CONVERSATIONS; i++)
    lanes.push(
      (await client.ask({ kind: 'create', url: urls[i % urls.length], key, count: perLane, actionCode: 'CHAT' })).ids!,
    );
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const dbStats = async () =>
    (
      await db.query<{ commits: string; rows: string }>(
        `select xact_commit::text as commits, (tup_inserted + tup_updated + tup_deleted)::text as rows
           from pg_stat_database where datname = current_database()`,
      )
    ).rows[0];
  try {
    let cpuBefore: number[] = [];
    let pgBefore = new Map<string, number>();
    let statsBefore: Promise<{ commits: string; rows: string }> = Promise.resolve({ commits: '0', rows: '0' });
    let started = 0;
    const { times } = await client.ask(
      {
        kind: 'turns',
        url: api,
        urls,
        key,
        lanes,
        content: CONTENT,
        turnsPerConversation: TURNS_PER_CONVERSATION,
        paced: false,
      },
      () => {
        started = performance.now();
        cpuBefore = processes.map((p) => processCpuMs(p.child.pid!));
        pgBefore = postgresCpu().byPid;
        statsBefore = dbStats();
      },
    );
    const wallSeconds = (performance.now() - started) / 1000;
    await sleep(SETTLE_MS);
    const cpu = processes.map((p, i) => ({ name: p.name, cpuMs: processCpuMs(p.child.pid!) - cpuBefore[i] }));
    const pgCpuMs = postgresCpu().since(pgBefore);
    const [before, after] = [await statsBefore, await dbStats()];
    // Nothing lost: every conversation holds a TurnStarted and two MessageRecorded (the user's and
    // the model's) per acknowledged command, and the projector has their rows.
    const ids = lanes.flat();
    const perTurnExpected = 1 + TURNS_PER_CONVERSATION;
    const counts = (
      await db.query<{ stream_id: string; turns: string; messages: string }>(
        `select stream_id,
                count(*) filter (where event_type = 'TurnStarted')::text as turns,
                count(*) filter (where event_type = 'MessageRecorded')::text as messages
           from es_events where stream_id = any($1) group by stream_id`,
        [ids.map((id) => `conversation-${id}`)],
      )
    ).rows;
    const projected = await waitForProjection(db, ids, ids.length * perTurnExpected * 2);
    const stored = {
      turnStarted: counts.reduce((n, r) => n + Math.min(Number(r.turns), perTurnExpected), 0),
      messages: counts.reduce((n, r) => n + Math.min(Number(r.messages), 2 * perTurnExpected), 0),
      projected,
    };
    const conversationsShort =
      ids.length -
      counts.filter((r) => Number(r.turns) >= perTurnExpected && Number(r.messages) >= 2 * perTurnExpected).length;
    return {
      name,
      turns: times!.length,
      turnsPerSecond: times!.length / wallSeconds,
      times: times!,
      acknowledged: ids.length * perTurnExpected,
      stored,
      conversationsShort,
      processes: cpu,
      pgCpuMs,
      commits: Number(after.commits) - Number(before.commits),
      rowsWritten: Number(after.rows) - Number(before.rows),
      wallSeconds,
    };
  } finally {
    await db.end();
  }
}

/** The projector's message rows of these conversations, once they reach `expected` (or 30 s pass). */
async function waitForProjection(db: Client, ids: string[], expected: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `select count(*)::text as n from rm_messages where conversation_id = any($1::uuid[])`,
      [ids],
    );
    const n = Number(rows[0].n);
    if (n >= expected || Date.now() > deadline) return n;
    await sleep(200);
  }
}

async function main(): Promise<void> {
  process.stdout.write(`load average at start: ${loadAverage().join(', ')}\n`);
  const sim = await startSimulatorProcess();
  const client = await startClientProcess();
  const results: DeploymentResult[] = [];
  const deployment = async (apps: [string, string][], body: (procs: Proc[], databaseUrl: string) => Promise<void>) => {
    const db = await createScratchDatabase('bench_scale', ADMIN_URL);
    const env = appEnv(db.url, ADMIN_KEY);
    const procs: Proc[] = [];
    try {
      // One at a time: the projector first, so it holds the read models' subscription.
      for (const [label, app] of apps) procs.push(await startApp(label, app, env));
      await body(procs, db.url);
    } finally {
      await Promise.all(procs.map(stopApp));
      await db.drop();
    }
  };
  try {
    await deployment(
      [
        ['projector', 'projector'],
        ['worker 1', 'worker'],
        ['worker 2', 'worker'],
        ['command API 1', 'command-api'],
        ['command API 2', 'command-api'],
      ],
      async (procs, databaseUrl) => {
        const apis = procs.filter((p) => p.name.startsWith('command API')).map((p) => p.url);
        results.push(await drive('2 command APIs, 2 workers, 1 projector', client, apis, databaseUrl, procs, sim.url));
      },
    );
    await deployment([['all-in-one server', 'server']], async (procs, databaseUrl) => {
      results.push(await drive('all-in-one server', client, [procs[0].url], databaseUrl, procs, sim.url));
    });
    print(results);
    process.stdout.write(`load average at end: ${loadAverage().join(', ')}\n`);
  } finally {
    client.close();
    sim.close();
  }
}

const loadAverage = () => loadavg().map((n) => n.toFixed(2));

function print(results: DeploymentResult[]): void {
  const head = [
    'deployment',
    'conversations',
    'turns',
    'turns/s',
    'turn ms p50 / p95 / p99',
    'acknowledged turns',
    'TurnStarted stored',
    'MessageRecorded stored',
    'rm_messages rows',
    'conversations short of events',
    'CPU ms/turn, all its processes',
    'PostgreSQL CPU ms/turn',
    'commits/turn',
    'rows written/turn',
  ];
  const out = [`\n| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of results) {
    const p = percentiles(r.times);
    const cpu = r.processes.reduce((n, x) => n + x.cpuMs, 0);
    out.push(
      `| ${[
        r.name,
        CONVERSATIONS,
        r.turns,
        r.turnsPerSecond.toFixed(0),
        `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} / ${p.p99.toFixed(1)}`,
        r.acknowledged,
        r.stored.turnStarted,
        r.stored.messages,
        r.stored.projected,
        r.conversationsShort,
        (cpu / r.turns).toFixed(2),
        (r.pgCpuMs / r.turns).toFixed(2),
        (r.commits / r.turns).toFixed(1),
        (r.rowsWritten / r.turns).toFixed(1),
      ].join(' | ')} |`,
    );
  }
  const procHead = ['deployment', 'process', 'CPU ms/turn', 'CPU, share of one core'];
  out.push('', `| ${procHead.join(' | ')} |`, '|---|---|---:|---:|');
  for (const r of results) {
    for (const x of r.processes)
      out.push(
        `| ${r.name} | ${x.name} | ${(x.cpuMs / r.turns).toFixed(2)} | ${((x.cpuMs / 1000 / r.wallSeconds) * 100).toFixed(0)} % |`,
      );
    out.push(
      `| ${r.name} | PostgreSQL (every process on this machine) | ${(r.pgCpuMs / r.turns).toFixed(2)} | ${((r.pgCpuMs / 1000 / r.wallSeconds) * 100).toFixed(0)} % |`,
    );
  }
  const [split, single] = results;
  if (split && single)
    out.push(
      '',
      `split ÷ all-in-one: ${(split.turnsPerSecond / single.turnsPerSecond).toFixed(2)} × the turns/s; lost turns: ${results.map((r) => r.acknowledged - Math.min(r.stored.turnStarted, r.stored.messages / 2)).join(' and ')}`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

/**
 * Closed-loop throughput beside the peers (issue 28), run by `bench:turn` after its own
 * scenarios (BENCH_PEERS=0 skips it): at 1, 10 and 50 conversations, each sending its next turn as
 * soon as the last one answered, plain and one-tool turns through three systems in the same run:
 * - the bare `openai` SDK straight to the simulator (the client process), replaying the very
 *   requests Parley sent in its run of the same scenario;
 * - LangGraph.js's `createReactAgent` with `PostgresSaver` (bench/peers/langgraph-process.ts);
 * - Parley's all-in-one server as `bench:turn` runs it, over HTTP from the client process.
 * Each conversation has BENCH_THROUGHPUT_TURNS_PER_CONVERSATION turns (default 10, at most
 * BENCH_TURNS), then the loop goes on with a new one, until about BENCH_THROUGHPUT_TURNS turns
 * (default 800; with BENCH_TURNS under 12, one conversation per loop) are done. Beside the
 * turns/s: each system's process CPU per turn, PostgreSQL's (all its processes on this machine,
 * each from its own earlier reading, so whatever else uses it shows too: the bare SDK's column is
 * that floor), and the WAL written per
 * turn (`pg_current_wal_lsn`, the whole cluster's, likewise). CPU and WAL are read
 * SETTLE_MS after the last reply, so that Parley's projections of the last turns count.
 */
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLangGraphPeer } from './peers/langgraph';
import { postgresCpu } from './process-cpu';
import {
  countStatements,
  percentiles,
  startProfile,
  type SimulatorProcess,
  type startClientProcess,
} from './turn-bench-support';

type BenchClient = Awaited<ReturnType<typeof startClientProcess>>;

/** Conversation counts of the closed loop; BENCH_THROUGHPUT_SIZES= (empty) leaves the closed loop out. */
const SIZES = (process.env.BENCH_THROUGHPUT_SIZES ?? '1,10,50')
  .split(',')
  .filter((size) => size.trim() !== '')
  .map(Number);
const BENCH_TURNS = Number(process.env.BENCH_TURNS ?? 12);
const TURNS_PER_CONVERSATION = Number(
  process.env.BENCH_THROUGHPUT_TURNS_PER_CONVERSATION ?? Math.max(1, Math.min(10, BENCH_TURNS)),
);
const TOTAL_TURNS = Number(process.env.BENCH_THROUGHPUT_TURNS ?? (BENCH_TURNS >= 12 ? 800 : 0));
const SETTLE_MS = 300;
/** The kinds of turn of the closed loop; BENCH_THROUGHPUT_KINDS=plain runs one. */
const KINDS = [
  { kind: 'plain', action: 'CHAT', content: 'Hello there, how are you today?', requests: 1 },
  { kind: 'tool', action: 'ANSWER', content: 'Where is my order A-1001?', requests: 2 },
].filter((k) => (process.env.BENCH_THROUGHPUT_KINDS ?? 'plain,tool').split(',').includes(k.kind));

export interface ThroughputTarget {
  /** Parley's all-in-one server, and a client key on it. */
  url: string;
  key: string;
  client: BenchClient;
  sim: SimulatorProcess;
  /** Any database on the PostgreSQL the systems use: where the WAL position is read. */
  databaseUrl: string;
}

/** One system's closed-loop run. */
interface Run {
  times: number[];
  turnsPerSecond: number;
  cpuMs: number;
  pgCpuMs: number;
  walBytes: number;
}

export interface ThroughputRow {
  kind: string;
  conversations: number;
  bare: Run;
  langgraph: Run;
  parley: Run;
}

export interface ThroughputResult {
  rows: ThroughputRow[];
  /** Requests the LangGraph peer tried to send off this machine (its tokenizer's ranks): none. */
  refused: string[];
  /** Model calls beyond one per plain turn and two per tool turn: retries. */
  extraCalls: { parley: number; langgraph: number };
}

export async function measureThroughput(target: ThroughputTarget): Promise<ThroughputResult> {
  const { client, sim } = target;
  const pg = new Client({ connectionString: target.databaseUrl });
  await pg.connect();
  const peer = await startLangGraphPeer(sim.url);
  const wal = async () =>
    Number(
      (await pg.query<{ lsn: string }>(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn`)).rows[0].lsn,
    );
  /**
   * Runs `drive` (which calls `onMeasuring` when its warm-up is over, and returns the measured
   * turns' times and, when it measures its own process, its CPU) with the counters around it.
   */
  const measure = async (
    drive: (onMeasuring: () => void) => Promise<{ times: number[]; cpuMs?: number }>,
  ): Promise<Run> => {
    let started = 0;
    let cpu = process.cpuUsage();
    let pgCpu = new Map<string, number>();
    let walBefore: Promise<number> = Promise.resolve(0);
    const { times, cpuMs } = await drive(() => {
      started = performance.now();
      cpu = process.cpuUsage();
      pgCpu = postgresCpu().byPid;
      walBefore = wal();
    });
    const seconds = (performance.now() - started) / 1000;
    await sleep(SETTLE_MS);
    const used = process.cpuUsage(cpu);
    return {
      times,
      turnsPerSecond: times.length / seconds,
      cpuMs: cpuMs ?? (used.user + used.system) / 1000,
      pgCpuMs: postgresCpu().since(pgCpu),
      walBytes: (await wal()) - (await walBefore),
    };
  };
  const retriesRecorded = async () =>
    (
      await pg.query<{ n: number }>(
        `select count(*)::int as n from es_events where event_type = 'ModelCallRetryScheduled'`,
      )
    ).rows[0].n;
  const rows: ThroughputRow[] = [];
  const extraCalls = { parley: 0, langgraph: 0 };
  try {
    for (const k of KINDS)
      for (const conversations of SIZES) {
        const perLane = Math.max(1, Math.ceil(TOTAL_TURNS / (conversations * TURNS_PER_CONVERSATION)));
        const lanes: string[][] = [];
        for (let i = 0; i < conversations; i++)
          lanes.push(
            (
              await client.ask({
                kind: 'create',
                url: target.url,
                key: target.key,
                count: perLane,
                actionCode: k.action,
              })
            ).ids!,
          );
        const firstRequest = await sim.requestCount();
        const retriesBefore = await retriesRecorded();
        let stopProfile: () => Promise<void> = async () => undefined;
        const parley = await measure(async (onMeasuring) => {
          const { times } = await client.ask(
            {
              kind: 'turns',
              url: target.url,
              key: target.key,
              lanes,
              content: k.content,
              turnsPerConversation: TURNS_PER_CONVERSATION,
              paced: false,
            },
            () => {
              onMeasuring();
              stopProfile = startProfile(`closed-${k.kind}-${conversations}`);
              countStatements.byText.clear();
            },
          );
          await stopProfile();
          // BENCH_SQL=1: the statements and Redis commands of Parley's turns in the closed loop.
          for (const [text, n] of [...countStatements.byText].sort((a, b) => b[1] - a[1]).slice(0, 30))
            process.stdout.write(`  ${(n / times!.length).toFixed(2)}  ${text}\n`);
          return { times: times! };
        });
        // The bare SDK replays one of Parley's turns (from the middle of a conversation), as many
        // times as Parley ran turns, from as many loops.
        const sent = await sim.requestsFrom(firstRequest);
        const parleyCalls = sent.length;
        const sample = sent.slice(Math.floor(sent.length / 2 / k.requests) * k.requests).slice(0, k.requests);
        const bare = await measure(async (onMeasuring) => {
          onMeasuring();
          const reply = await client.ask({
            kind: 'replay',
            baseURL: sim.url,
            requests: sample,
            concurrency: conversations,
            count: parley.times.length,
            paced: false,
          });
          return { times: reply.times!, cpuMs: reply.cpuMs! };
        });
        const threads = lanes.map((lane) => lane.map((id) => `${k.kind}-${conversations}-${id}`));
        const beforeLangGraph = await sim.requestCount();
        const langgraph = await measure(async (onMeasuring) => {
          const reply = await peer.ask(
            { kind: 'turns', lanes: threads, content: k.content, turnsPerConversation: TURNS_PER_CONVERSATION },
            onMeasuring,
          );
          return { times: reply.times!, cpuMs: reply.cpuMs! };
        });
        // Both ran the same turns: one model call per plain turn, two per tool turn (the warm-ups
        // too); a call retried after a transient failure adds one, and is counted.
        const conversationCount = lanes.flat().length;
        const expected = (run: Run) => (run.times.length + conversationCount) * k.requests;
        const langgraphCalls = (await sim.requestCount()) - beforeLangGraph;
        if (parleyCalls < expected(parley) || langgraphCalls < expected(langgraph))
          throw new Error(
            `${k.kind} turns, ${conversations} conversations: model calls Parley ${parleyCalls}, LangGraph ${langgraphCalls}; expected ${expected(parley)}`,
          );
        // Parley's retries are its own records (ModelCallRetryScheduled): the simulator also counts
        // a request that reaches it late from the phase before (seen: one in 1,650, after
        // LangGraph's run), which Parley did not send.
        extraCalls.parley += (await retriesRecorded()) - retriesBefore;
        extraCalls.langgraph += langgraphCalls - expected(langgraph);
        rows.push({ kind: k.kind, conversations, bare, langgraph, parley });
        process.stdout.write(`${throughputCells(rows.at(-1)!).join(' | ')}\n`);
      }
    const { refused } = await peer.ask({ kind: 'offline' });
    return { rows, refused: refused ?? [], extraCalls };
  } finally {
    await peer.close();
    await pg.end();
  }
}

const perTurn = (run: Run, value: number, digits = 2) => (value / run.times.length).toFixed(digits);

function throughputCells(r: ThroughputRow): string[] {
  const { bare, langgraph, parley } = r;
  const all = [bare, langgraph, parley];
  return [
    `${r.kind} turn, ${r.conversations} conversation${r.conversations > 1 ? 's' : ''}`,
    all.map((run) => run.times.length).join(' / '),
    all.map((run) => run.turnsPerSecond.toFixed(0)).join(' / '),
    (parley.turnsPerSecond / langgraph.turnsPerSecond).toFixed(2),
    (parley.turnsPerSecond / bare.turnsPerSecond).toFixed(2),
    all.map((run) => perTurn(run, run.cpuMs)).join(' / '),
    all.map((run) => perTurn(run, run.pgCpuMs)).join(' / '),
    all.map((run) => perTurn(run, run.walBytes / 1024, 1)).join(' / '),
    all
      .map((run) => {
        const p = percentiles(run.times);
        return `${p.p50.toFixed(1)}, ${p.p95.toFixed(1)}`;
      })
      .join(' / '),
  ];
}

export function printThroughput({ rows, refused, extraCalls }: ThroughputResult): void {
  const head = [
    'closed loop',
    'turns bare / LangGraph / Parley',
    'turns/s bare / LangGraph / Parley',
    'Parley ÷ LangGraph',
    'Parley ÷ bare',
    'process CPU ms/turn bare / LangGraph / Parley',
    'PostgreSQL CPU ms/turn during bare / LangGraph / Parley',
    'WAL KB/turn during bare / LangGraph / Parley',
    'turn ms p50, p95 bare / LangGraph / Parley',
  ];
  const out = [`\n| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) out.push(`| ${throughputCells(r).join(' | ')} |`);
  // Time added to a turn at one conversation: each system's turn less the bare SDK's median.
  const added = ['time added at 1 conversation', 'LangGraph + PostgresSaver ms p50 / p95', 'Parley ms p50 / p95'];
  out.push('', `| ${added.join(' | ')} |`, '|---|---:|---:|');
  for (const r of rows.filter((row) => row.conversations === 1)) {
    const model = percentiles(r.bare.times).p50;
    const cell = (run: Run) => {
      const p = percentiles(run.times.map((t) => t - model));
      return `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)}`;
    };
    out.push(`| ${r.kind} turn | ${cell(r.langgraph)} | ${cell(r.parley)} |`);
  }
  out.push(
    '',
    `LangGraph's requests off this machine (tokenizer ranks): ${refused.length === 0 ? 'none' : refused.join(', ')}`,
    `Model calls retried: Parley ${extraCalls.parley} (its ModelCallRetryScheduled events), LangGraph ${extraCalls.langgraph} (requests beyond its turns')`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

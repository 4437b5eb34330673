/**
 * Turn benchmark: what Parley adds to a turn on top of the model. The all-in-one server runs in
 * this process on a fresh database (Redis queue, unique prefix) against the simulator with zero
 * latency (a process of its own), driven over HTTP by a client process; from that client, the
 * very requests Parley sent are replayed straight to the simulator with the bare `openai` SDK
 * at the same concurrency (the baseline). Each turn's time is also taken as the server saw it,
 * less the simulator's own time on its requests (overhead) or less the time the server waited on
 * its model requests (gateway overhead, as LiteLLM's x-litellm-overhead-duration-ms is
 * measured). Run with `npm run bench:turn`; results are recorded in
 * bench/README.md. BENCH_ONLY=024 runs some scenarios (their indexes in SCENARIOS_ALL);
 * BENCH_CPU_PROFILE=<dir> writes a CPU profile of each measured phase; BENCH_SQL=1 lists the
 * statements and Redis commands per turn, the server's user/system CPU and its event loop's
 * delay; BENCH_TIMELINE=1 prints the timelines of the turns nearest the median
 * (BENCH_TIMELINE_AT=0.95: another quantile; BENCH_TIMELINE_N=3 turns): each SQL statement,
 * Redis command and model request with its start and end; BENCH_STEPS=1 prints instead each step
 * of a turn with its p50 and p95, and its mean in the middle turns against the slowest tenth.
 * Last, the bytes a streamed reply stores (bench/stream-storage.ts; BENCH_STORAGE=0 skips them;
 * BENCH_ONLY=storage measures them alone).
 * BENCH_ENCRYPTION=compare runs each scenario four times, content encryption off, on, off, on
 * (new conversations each time), and prints the server's CPU ms/turn of each mode and their ratio.
 */
import 'reflect-metadata';
import { cipherOps, EVENT_STORE, SealingEventStore, type EventStore } from '../libs/event-store/src';
import { ApiKeysService } from '../libs/auth/src';
import { CatalogService } from '../libs/catalog/src';
import { createHttpApp } from '../libs/transport/src';
import { AppModule } from '../apps/server/src/app.module';
import { testCatalog } from '../test/support/test-catalog';
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  benchConfig,
  benchLogger,
  clearTimelines,
  countStatements,
  createBenchDatabase,
  everyFeatureOn,
  turnTimelines,
  percentiles,
  startProfile,
  startClientProcess,
  startSimulatorProcess,
  stepTable,
  traceRequests,
} from './turn-bench-support';
import { postgresCpu } from './process-cpu';
import { measureStreamStorage, printChunkColumns, printStreamStorage, printTurnEvents } from './stream-storage';
import { measureThroughput, printThroughput } from './throughput';

const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const TURNS = Number(process.env.BENCH_TURNS ?? 12);
const PACED_TURNS = Number(process.env.BENCH_PACED_TURNS ?? 10);
const PLAIN = { kind: 'plain', action: 'CHAT', content: 'Hello there, how are you today?' } as const;
const TOOL = { kind: 'tool', action: 'ANSWER', content: 'Where is my order A-1001?' } as const;
/**
 * `paced`: each conversation waits 1–3 s (like a person) before its next message; otherwise back
 * to back. `split`: the commands go to a second instance without a worker (a command API beside a
 * worker), so the turn job goes through the queue and the waiting command hears of its end from
 * the worker instance.
 */
const SCENARIOS_ALL = [
  { ...PLAIN, concurrency: 1, conversations: 12, paced: false, split: false },
  { ...TOOL, concurrency: 1, conversations: 12, paced: false, split: false },
  { ...PLAIN, concurrency: 50, conversations: 1, paced: false, split: false },
  { ...TOOL, concurrency: 50, conversations: 1, paced: false, split: false },
  { ...PLAIN, concurrency: 50, conversations: 1, paced: true, split: false },
  { ...TOOL, concurrency: 50, conversations: 1, paced: true, split: false },
  { ...PLAIN, concurrency: 1, conversations: 12, paced: false, split: true },
  { ...TOOL, concurrency: 1, conversations: 12, paced: false, split: true },
];
const STORAGE_ONLY = process.env.BENCH_ONLY === 'storage';
const SCENARIOS = SCENARIOS_ALL.filter((_, i) => (process.env.BENCH_ONLY ?? '01234567').includes(String(i)));

async function main(): Promise<void> {
  const db = await createBenchDatabase();
  const sim = await startSimulatorProcess();
  let client: Awaited<ReturnType<typeof startClientProcess>> | undefined;
  const config = benchConfig(ADMIN_KEY, {
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    MAX_RUNNING_TURNS_PER_SUBJECT: '1000',
    ...everyFeatureOn(),
    // How streamed replies are cut into stored events, to compare windows (unset: the defaults).
    STREAM_EVENT_FIRST_MS: process.env.STREAM_EVENT_FIRST_MS,
    STREAM_EVENT_WINDOW_MS: process.env.STREAM_EVENT_WINDOW_MS,
    STREAM_EVENT_MAX_WINDOW_MS: process.env.STREAM_EVENT_MAX_WINDOW_MS,
    STREAM_EVENT_MAX_CHARS: process.env.STREAM_EVENT_MAX_CHARS,
    PROJECTOR_THREAD: process.env.PROJECTOR_THREAD,
  });
  const app = await createHttpApp(AppModule.forRoot(config), config, benchLogger(config));
  // The command API of the split scenarios (the same server without the worker, in this process),
  // started before the first of them, so its projector stays on standby behind the server's.
  let front: typeof app | null = null;
  // The server's own view of each turn request: received -> reply written (Fastify's elapsedTime),
  // and the simulator's requests its turn made.
  const served: number[] = [];
  const modelRequests: string[][] = [];
  const modelWaits: number[] = [];
  const turnRequest = (request: { method: string; url: string }) =>
    request.method === 'POST' && request.url.endsWith('/messages');
  const instrument = (instance: typeof app) =>
    traceRequests(instance.getHttpAdapter().getInstance(), turnRequest, (elapsed, scope) => {
      served.push(elapsed);
      modelRequests.push(scope?.ids ?? []);
      modelWaits.push(scope?.modelMs ?? Number.NaN);
    });
  instrument(app);
  try {
    await app.listen(0, '127.0.0.1');
    const urlOf = (instance: typeof app) =>
      `http://127.0.0.1:${(instance.getHttpServer().address() as { port: number }).port}`;
    const mainUrl = urlOf(app);
    await app.get(CatalogService).apply(testCatalog(sim.url), { dryRun: false });
    client = await startClientProcess();
    // Conversations are driven as a client service with an API key of its own, as in production.
    const { key } = await app.get(ApiKeysService).create({ subject: 'svc-bench', roles: ['client'] });
    const store = app.get<EventStore>(EVENT_STORE);
    const rows: string[][] = [];
    const sealing = store instanceof SealingEventStore ? store : null;
    const modes = process.env.BENCH_ENCRYPTION === 'compare' && sealing ? [false, true, false, true] : [null];
    const cpuByMode: EncryptionRun[] = [];
    for (const s of SCENARIOS)
      for (const encrypt of modes) {
        if (encrypt !== null) sealing!.encrypt = encrypt;
        if (s.split && !front) {
          front = await createHttpApp(AppModule.forRoot(config, { worker: false }), config, benchLogger(config));
          instrument(front);
          await front.listen(0, '127.0.0.1');
        }
        const url = s.split && front ? urlOf(front) : mainUrl;
        const lanes: string[][] = [];
        for (let i = 0; i < s.concurrency; i++)
          lanes.push(
            (await client.ask({ kind: 'create', url, key, count: s.conversations, actionCode: s.action })).ids!,
          );
        const all = lanes.flat();
        const eventsBefore = await countEvents(store, all);
        const firstRequest = await sim.requestCount();
        let statementsBefore = 0;
        let redisBefore = 0;
        let cpu = process.cpuUsage();
        let pgCpu = new Map<string, number>();
        let sealingBefore = 0;
        let opsBefore = 0;
        let wall = performance.now();
        const turnsPerConversation = s.paced ? PACED_TURNS : TURNS;
        // The client warms up (one turn per conversation), then tells us it measures.
        let stopProfile = async () => undefined as void;
        const loopDelay = monitorEventLoopDelay({ resolution: 1 });
        const latencies = (
          await client.ask(
            { kind: 'turns', url, key, lanes, content: s.content, turnsPerConversation, paced: s.paced },
            () => {
              served.length = 0;
              modelRequests.length = 0;
              modelWaits.length = 0;
              statementsBefore = countStatements.total;
              redisBefore = countStatements.redis;
              countStatements.byText.clear();
              clearTimelines();
              cpu = process.cpuUsage();
              sealingBefore = sealing?.spent.ms ?? 0;
              opsBefore = cipherOps.sealed + cipherOps.opened;
              pgCpu = postgresCpu().byPid;
              wall = performance.now();
              loopDelay.enable();
              stopProfile = startProfile(
                `${s.kind}-${s.concurrency}${s.paced ? '-paced' : ''}${s.split ? '-split' : ''}`,
              );
            },
          )
        ).times!;
        await stopProfile();
        loopDelay.disable();
        const serverTimes = served.splice(0);
        const turnRequests = modelRequests.splice(0);
        const waits = modelWaits.splice(0);
        const ids = turnRequests.flat();
        const simMs = new Map((await sim.durations(ids)).map((d, i) => [ids[i], d]));
        const simTimes = turnRequests.map((turn) => turn.reduce((sum, id) => sum + simMs.get(id)!, 0));
        const turns = latencies.length;
        const throughput = turns / ((performance.now() - wall) / 1000);
        const cpuPerTurn = cpuMs(process.cpuUsage(cpu)) / turns;
        const sealingMs = (sealing?.spent.ms ?? 0) - sealingBefore;
        const cipherOpsPerTurn = (cipherOps.sealed + cipherOps.opened - opsBefore) / turns;
        const pgCpuPerTurn = postgresCpu().since(pgCpu) / turns;
        if (process.env.BENCH_SQL) {
          const { user, system } = process.cpuUsage(cpu);
          process.stderr.write(
            `CPU ms/turn: user ${(user / 1000 / turns).toFixed(2)}, system ${(system / 1000 / turns).toFixed(2)}\n`,
          );
          const delay = (q: number) => (loopDelay.percentile(q) / 1e6).toFixed(1);
          process.stderr.write(
            `event loop delay ms (1 ms timer) p50/p95/p99/max: ${delay(50)} / ${delay(95)} / ${delay(99)} / ${(loopDelay.max / 1e6).toFixed(1)}\n`,
          );
        }
        const statements = (countStatements.total - statementsBefore) / turns;
        const redis = (countStatements.redis - redisBefore) / turns;
        if (process.env.BENCH_SQL)
          for (const [text, n] of [...countStatements.byText].sort((a, b) => b[1] - a[1]))
            process.stderr.write(`${(n / turns).toFixed(2)}  ${text}\n`);
        if (process.env.BENCH_STEPS) {
          process.stderr.write(`Steps of a turn, ms (the server's marks):\n${stepTable(s.concurrency > 1)}\n`);
        } else if (process.env.BENCH_TIMELINE) {
          const at = Number(process.env.BENCH_TIMELINE_AT ?? 0.5);
          const timelines = turnTimelines(Number(process.env.BENCH_TIMELINE_N ?? 3), at, s.concurrency > 1);
          process.stderr.write(`Turns nearest the p${at * 100} of their length, ms from receipt:\n${timelines}\n`);
        }
        const events = ((await countEvents(store, all)) - eventsBefore) / (turns + all.length);
        // One turn's model requests as Parley sent them (a turn halfway through a conversation).
        const perTurn = s.kind === 'tool' ? 2 : 1;
        const measured = await sim.requestsFrom(firstRequest);
        const sample = measured.slice(Math.floor(measured.length / 2 / perTurn) * perTurn).slice(0, perTurn);
        const baselineCount = s.paced ? turns : Math.max(turns, 200);
        const baseline = await client.ask({
          kind: 'replay',
          baseURL: sim.url,
          requests: sample,
          concurrency: s.concurrency,
          count: baselineCount,
          paced: s.paced,
        });
        const baseCpuPerTurn = baseline.cpuMs! / baselineCount;
        const model = percentiles(baseline.times!).p50;
        const turn = percentiles(latencies);
        const added = percentiles(latencies.map((l) => l - model));
        const serverAdded = percentiles(serverTimes.map((l) => l - model));
        const simulator = percentiles(simTimes);
        const overhead = percentiles(serverTimes.map((l, i) => l - simTimes[i]));
        const gateway = percentiles(serverTimes.map((l, i) => l - waits[i]));
        const base = percentiles(baseline.times!);
        const scenario = `${s.kind} turn, ${s.concurrency} concurrent${s.paced ? ', paced' : ''}${s.split ? ', command API apart' : ''}`;
        if (encrypt !== null)
          cpuByMode.push({
            scenario,
            encrypt,
            cpu: cpuPerTurn * turns,
            turns,
            sealingMs,
            ops: cipherOpsPerTurn * turns,
          });
        rows.push([
          `${scenario}${encrypt === null ? '' : `, encryption ${encrypt ? 'on' : 'off'}`}`,
          String(turns),
          ms(base),
          ms(turn),
          ms(added),
          ms(serverAdded),
          // Split: the turn runs in a job the worker fetched, outside the command's async context.
          s.split ? '–' : ms(simulator),
          s.split ? '–' : ms(overhead),
          s.split ? '–' : ms(gateway),
          `${baseCpuPerTurn.toFixed(2)} / ${cpuPerTurn.toFixed(2)}`,
          pgCpuPerTurn.toFixed(2),
          throughput.toFixed(0),
          events.toFixed(1),
          statements.toFixed(1),
          redis.toFixed(1),
        ]);
        process.stdout.write(`${rows.at(-1)!.join(' | ')}\n`);
      }
    if (!STORAGE_ONLY) printTable(rows);
    if (cpuByMode.length > 0) printEncryptionCost(cpuByMode);
    if (process.env.BENCH_STORAGE !== '0') {
      const storage = await measureStreamStorage(app, mainUrl, key, db.url);
      printStreamStorage(storage);
      printTurnEvents(storage);
      printChunkColumns(storage);
    }
    // Closed-loop throughput beside the bare SDK and LangGraph (bench/throughput.ts).
    if (process.env.BENCH_PEERS !== '0' && !STORAGE_ONLY)
      printThroughput(await measureThroughput({ url: mainUrl, key, client, sim, databaseUrl: db.url }));
  } finally {
    client?.close();
    await front?.close();
    await app.close();
    sim.close();
    await db.drop();
  }
}

const ms = (p: { p50: number; p95: number; p99: number }) =>
  `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} / ${p.p99.toFixed(1)}`;

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

async function countEvents(store: EventStore, ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await store.readStream(`conversation-${id}`)).length;
  return n;
}

/**
 * The server's CPU per turn with content encryption off and on, per scenario, and what it adds:
 * as the difference of the two (whole-process CPU: noisy on a shared machine) and as the time
 * spent inside sealing and opening itself (SealingEventStore.spent) against the turn's CPU.
 */
interface EncryptionRun {
  scenario: string;
  encrypt: boolean;
  cpu: number;
  turns: number;
  sealingMs: number;
  /** AES-GCM operations: values sealed and opened. */
  ops: number;
}

function printEncryptionCost(runs: EncryptionRun[]): void {
  process.stdout.write(
    "\n| scenario | CPU ms/turn, encryption off | on | difference | sealing and opening ms/turn (on) | its share of the turn's CPU | AES-GCM operations/turn |\n|---|---:|---:|---:|---:|---:|---:|\n",
  );
  for (const scenario of [...new Set(runs.map((r) => r.scenario))]) {
    const of = (encrypt: boolean) => runs.filter((r) => r.scenario === scenario && r.encrypt === encrypt);
    const turnsOf = (encrypt: boolean) => of(encrypt).reduce((sum, r) => sum + r.turns, 0);
    const perTurn = (encrypt: boolean) => of(encrypt).reduce((sum, r) => sum + r.cpu, 0) / turnsOf(encrypt);
    const off = perTurn(false);
    const on = perTurn(true);
    const sealing = of(true).reduce((sum, r) => sum + r.sealingMs, 0) / turnsOf(true);
    const ops = of(true).reduce((sum, r) => sum + r.ops, 0) / turnsOf(true);
    process.stdout.write(
      `| ${scenario} | ${off.toFixed(2)} | ${on.toFixed(2)} | ${(((on - off) / off) * 100).toFixed(1)} % | ${sealing.toFixed(3)} | ${((sealing / on) * 100).toFixed(1)} % | ${ops.toFixed(1)} |\n`,
    );
  }
}

function printTable(rows: string[][]): void {
  const head = [
    'scenario',
    'turns',
    'bare SDK ms p50/p95/p99',
    'Parley turn ms p50/p95/p99',
    'added ms p50/p95/p99',
    'server-side added ms p50/p95/p99',
    "simulator's time ms p50/p95/p99",
    'overhead ms p50/p95/p99',
    'gateway overhead ms p50/p95/p99',
    'CPU ms/turn bare / Parley',
    'PostgreSQL CPU ms/turn',
    'turns/s',
    'events/turn',
    'SQL statements/turn',
    'Redis commands/turn',
  ];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|\n`);
  for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

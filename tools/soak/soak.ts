/**
 * The soak: the all-in-one server (and a second worker) under a bounded mixed load for
 * SOAK_MINUTES (default 10), with faults injected as it runs, then a reconciliation of what the
 * clients were told against what was stored, and a markdown table of it all. `npm run soak`;
 * described in docs/reliability.md.
 *
 * Settings: SOAK_MINUTES (default 10), SOAK_LANES (clients sending back to back, default 20),
 * SOAK_FAULT_EVERY_S (seconds between two faults, default 30; 0: none), SOAK_SAMPLE_S (memory
 * sample period, default 10: the server's RSS, and its heap after a full GC through
 * tools/soak/memory-probe.ts), SOAK_HEAP_SNAPSHOTS=<dir> (heap snapshots of the server at a third
 * and at the end of the load, written there; compare them with tools/soak/heap-diff.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, headers, type NatsConnection } from 'nats';
import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import { streamIdOf, evolve, initialState, type ConversationState } from '../../libs/domain/src';
import { toEnvelope } from '../../libs/conversation/src';
import { PostgresEventStore } from '../../libs/event-store/src';
import { PROJECTIONS, rebuildProjections } from '../../libs/read-models/src';
import { soakCatalog } from './soak-script';
import { startSoakStack, type SoakStack } from './soak-stack';

export type TurnKind = 'plain' | 'plain-nats' | 'tool' | 'mcp' | 'question' | 'approval' | 'kill';
export type FaultKind = 'worker-kill' | 'redis-restart' | 'postgres-kill' | 'nats-restart' | 'mcp-kill';
export const FAULT_KINDS: FaultKind[] = ['worker-kill', 'redis-restart', 'postgres-kill', 'nats-restart', 'mcp-kill'];

export interface SoakOptions {
  minutes: number;
  lanes: number;
  /** Milliseconds between two faults (0: none), cycling through `faults`. */
  faultEveryMs: number;
  faults: FaultKind[];
  sampleMs: number;
  heapSnapshotDir?: string;
  /** Extra settings of the Parley processes. */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface SoakResult {
  ok: boolean;
  table: string;
  turns: Record<TurnKind, number>;
  failedTurns: number;
  conversations: number;
  inputsTried: number;
  inputsAcknowledged: number;
  inputsGivenUp: number;
  faults: { kind: FaultKind; atS: number; recoveredMs: number; survived: boolean }[];
  problems: string[];
  /** The server's RSS, and its heap in use and external memory after a full GC, over time. */
  rss: { atS: number; conversations: number; rssMb: number; heapUsedMb: number; externalMb: number }[];
  secondHalfDrift: number;
  /** The same drift of the heap in use after a full GC: growth there is a leak, not heap sizing. */
  heapDrift: number;
}

const KIND_WEIGHTS: [TurnKind, number][] = [
  ['plain', 20],
  ['plain-nats', 10],
  ['tool', 20],
  ['mcp', 15],
  ['question', 15],
  ['approval', 15],
  ['kill', 5],
];
const ACTION_OF: Record<TurnKind, string> = {
  plain: 'CHAT',
  'plain-nats': 'CHAT',
  tool: 'ANSWER',
  mcp: 'MCP',
  question: 'ANSWER',
  approval: 'CANCEL',
  kill: 'CHAT',
};
const CONTENT_OF: Record<TurnKind, string> = {
  plain: 'Hello there, how are you today?',
  'plain-nats': 'Hello over NATS, how are you?',
  tool: 'Where is my order A-1001?',
  mcp: 'echo this for me please',
  question: 'Please open a ticket for me.',
  approval: 'cancel my order A-1001',
  kill: 'hold on, this takes a while',
};
/** Answers that say to try again: a dependency is down, a turn still runs, a limit. */
const RETRYABLE = new Set([409, 429, 500, 502, 503, 504]);
const GIVE_UP_MS = 120_000;

function pickKind(): TurnKind {
  const total = KIND_WEIGHTS.reduce((s, [, w]) => s + w, 0);
  let r = Math.random() * total;
  for (const [kind, w] of KIND_WEIGHTS) if ((r -= w) < 0) return kind;
  return 'plain';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the soak reads several reply shapes
  body: any;
}

class GaveUp extends Error {}

/** The clients: HTTP and NATS commands with idempotency keys, retried with the same key. */
class Load {
  readonly acked = new Map<string, string>();
  inputsTried = 0;
  inputsGivenUp = 0;
  failedTurns = 0;
  conversations = 0;
  readonly turns: Record<TurnKind, number> = {
    plain: 0,
    'plain-nats': 0,
    tool: 0,
    mcp: 0,
    question: 0,
    approval: 0,
    kill: 0,
  };
  /** When a turn last ended (ms since epoch): the faults' survival is judged by it. */
  lastTurnAt = 0;
  stopped = false;
  errors: string[] = [];
  nats: NatsConnection | null = null;

  constructor(private readonly stack: SoakStack) {}

  private async http(method: string, path: string, body?: unknown, key?: string): Promise<Reply> {
    const res = await fetch(`${this.stack.server.url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.stack.adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  private async overNats(method: string, payload: Record<string, unknown>, key: string): Promise<Reply> {
    if (!this.nats) throw new Error('no NATS connection');
    const h = headers();
    h.set('authorization', `Bearer ${this.stack.adminKey}`);
    const msg = await this.nats.request(
      `${this.stack.prefix}.cmd.${method}`,
      JSON.stringify({ ...payload, commandId: key }),
      {
        headers: h,
        timeout: 30_000,
      },
    );
    const answer = JSON.parse(msg.string()) as { result?: unknown; error?: { code: string; status?: number } };
    if (answer.error) return { status: answer.error.status ?? statusOfCode(answer.error.code), body: answer.error };
    return { status: 200, body: answer.result };
  }

  /** A command, tried again with its key until it is taken or refused for good; the taken reply. */
  async command(conversationId: string | null, send: (key: string) => Promise<Reply>): Promise<Reply> {
    const key = randomUUID();
    this.inputsTried++;
    const deadline = Date.now() + GIVE_UP_MS;
    let last: string;
    for (;;) {
      try {
        const reply = await send(key);
        if (reply.status < 300) {
          this.acked.set(key, conversationId ?? reply.body?.conversationId);
          return reply;
        }
        last = `${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
        if (!RETRYABLE.has(reply.status)) break;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() > deadline || this.stopped) break;
      await sleep(300 + Math.random() * 700);
    }
    this.inputsGivenUp++;
    if (this.errors.length < 20) this.errors.push(last);
    throw new GaveUp(last);
  }

  private post(id: string | null, path: string, body: Record<string, unknown>) {
    return this.command(id, (key) => this.http('POST', path, body, key));
  }

  /** Waits for a turn that answered 202 (or still runs) to end or pause; its conversation then. */
  private async settle(id: string): Promise<Reply['body']> {
    for (const deadline = Date.now() + GIVE_UP_MS; Date.now() < deadline;) {
      const found = await this.http('GET', `/conversations/${id}`).catch(() => null);
      if (found?.status === 200 && found.body.status !== 'RU') return found.body;
      await sleep(300);
    }
    throw new GaveUp(`conversation ${id} still running`);
  }

  /** Answers what a turn waits for until it ends; counts it. */
  private async finish(kind: TurnKind, id: string, first: Reply): Promise<void> {
    let reply = first;
    for (let round = 0; round < 5; round++) {
      let body = reply.body;
      if (reply.status === 202 || body?.status === 'RU') body = await this.settle(id);
      if (body.status === 'WA') {
        const question = body.pendingQuestion ?? (await this.http('GET', `/conversations/${id}/pending-question`)).body;
        const approvals =
          body.pendingApprovals ?? (await this.http('GET', `/conversations/${id}/pending-approvals`)).body ?? [];
        if (question?.questions?.length) {
          const answers = Object.fromEntries(question.questions.map((q: { key: string }) => [q.key, 'high']));
          reply = await this.post(id, `/conversations/${id}/answers`, { answers });
          continue;
        }
        const approval = (Array.isArray(approvals) ? approvals : (approvals.approvals ?? []))[0];
        if (approval) {
          const verb = Math.random() < 0.5 ? 'approve' : 'reject';
          reply = await this.post(id, `/conversations/${id}/tool-calls/${approval.toolCallId}/${verb}`, {});
          continue;
        }
        // Waiting, as the read model says, on something its reply has not shown yet.
        await sleep(200);
        reply = { status: 202, body: null };
        continue;
      }
      if (body.status === 'FA') this.failedTurns++;
      else this.turns[kind]++;
      this.lastTurnAt = Date.now();
      return;
    }
  }

  async lane(): Promise<void> {
    while (!this.stopped) {
      const kind = pickKind();
      try {
        const started = await this.post(null, '/conversations', { agentCode: 'HELPDESK', actionCode: ACTION_OF[kind] });
        const id = started.body.conversationId as string;
        this.conversations++;
        if (kind === 'kill') {
          await this.post(id, `/conversations/${id}/messages`, { content: CONTENT_OF[kind], wait: false });
          await sleep(100 + Math.random() * 400);
          await this.post(id, `/conversations/${id}/kill`, { reason: 'soak' });
          this.turns.kill++;
          this.lastTurnAt = Date.now();
          continue;
        }
        const turns = 1 + Math.floor(Math.random() * 4);
        for (let t = 0; t < turns && !this.stopped; t++) {
          const reply =
            kind === 'plain-nats'
              ? await this.command(id, (key) =>
                  this.overNats('sendMessage', { conversationId: id, content: CONTENT_OF[kind] }, key),
                )
              : await this.post(id, `/conversations/${id}/messages`, { content: CONTENT_OF[kind] });
          await this.finish(kind, id, reply);
        }
      } catch (err) {
        if (!(err instanceof GaveUp)) {
          if (this.errors.length < 20) this.errors.push((err as Error).stack ?? String(err));
          await sleep(500);
        }
      }
    }
  }
}

function statusOfCode(code: string): number {
  const known: Record<string, number> = {
    SERVICE_UNAVAILABLE: 503,
    TIMEOUT: 504,
    CONFLICT: 409,
    RATE_LIMITED: 429,
    INTERNAL: 500,
    INTERNAL_ERROR: 500,
  };
  return known[code] ?? 400;
}

async function ready(stack: SoakStack, ms: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    const res = await fetch(`${stack.server.url}/health/ready`).catch(() => null);
    if (res?.status === 200) return Date.now() - started;
    await sleep(250);
  }
  return Number.NaN;
}

async function injectFault(stack: SoakStack, kind: FaultKind): Promise<void> {
  switch (kind) {
    case 'worker-kill':
      return stack.restartWorker();
    case 'redis-restart':
      return stack.restartRedis();
    case 'nats-restart':
      return stack.restartNats();
    case 'mcp-kill':
      return stack.restartMcp(3000);
    case 'postgres-kill': {
      const admin = new Client({ connectionString: stack.db.url });
      await admin.connect();
      try {
        await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
      } finally {
        await admin.end();
      }
    }
  }
}

const mb = (bytes: number) => Math.round(bytes / 1048576);

/** What the clients were told against what was stored; each problem found, as a line. */
async function reconcile(stack: SoakStack, load: Load, log: (line: string) => void): Promise<string[]> {
  const problems: string[] = [];
  const pool = new Pool({ connectionString: stack.db.url, max: 4 });
  const store = new PostgresEventStore(pool, { maxEventBytes: 2 * 1048576, pollMs: 200 });
  try {
    // Quiet: no turn running, and the read models at the end of every stream.
    for (const deadline = Date.now() + 120_000; ;) {
      const { rows } = await pool.query<{ running: string; behind: string }>(
        `select (select count(*) from rm_conversations where status = 'RU') as running,
                (select count(*) from es_streams s left join rm_conversations c
                   on c.conversation_id::text = substr(s.stream_id, length('conversation-') + 1)
                 where s.category = 'conversation' and c.last_revision is distinct from s.version) as behind`,
      );
      if (Number(rows[0].running) === 0 && Number(rows[0].behind) === 0) break;
      if (Date.now() > deadline) {
        problems.push(
          `two minutes after the load: ${rows[0].running} conversations still running, ${rows[0].behind} read models behind their stream`,
        );
        break;
      }
      await sleep(500);
    }
    // Every acknowledged command has its events.
    const { rows: keys } = await pool.query<{ key: string }>(
      `select distinct metadata->>'commandId' as key from es_events where metadata ? 'commandId'`,
    );
    const stored = new Set(keys.map((k) => k.key));
    const lost = [...load.acked.keys()].filter((k) => !stored.has(k));
    if (lost.length)
      problems.push(`${lost.length} acknowledged commands have no event (e.g. ${lost.slice(0, 3).join(', ')})`);
    log(`reconcile: ${load.acked.size} acknowledged commands, ${lost.length} without events`);
    // Every hash chain verifies, and each conversation's read model is the fold of its stream.
    const { rows: streams } = await pool.query<{ stream_id: string }>(
      `select stream_id from es_streams where category = 'conversation'`,
    );
    const { rows: projected } = await pool.query<{ conversation_id: string; status: string; last_revision: string }>(
      'select conversation_id, status, last_revision from rm_conversations',
    );
    const byId = new Map(projected.map((r) => [r.conversation_id, r]));
    let unverified = 0;
    let unlike = 0;
    // Four streams at a time: one per connection of the pool.
    let nextStream = 0;
    const check = async (): Promise<void> => {
      for (let i = nextStream++; i < streams.length; i = nextStream++) await checkStream(streams[i].stream_id);
    };
    const checkStream = async (stream_id: string) => {
      const id = stream_id.slice('conversation-'.length);
      const verified = await store.verifyStream(stream_id);
      if (!verified.ok) unverified++;
      let state: ConversationState = initialState();
      let revision = -1n;
      for (const e of await store.readStream(streamIdOf(id))) {
        const envelope = toEnvelope(e as never);
        if (envelope) state = evolve(state, envelope);
        revision = e.revision;
      }
      const row = byId.get(id);
      if (!row || row.status !== state.status || BigInt(row.last_revision) !== revision) {
        unlike++;
        if (unlike <= 3)
          problems.push(
            `conversation ${id}: read model ${row ? `${row.status}@${row.last_revision}` : 'missing'}, fold ${state.status}@${revision}`,
          );
      }
    };
    await Promise.all([check(), check(), check(), check()]);
    if (unverified) problems.push(`${unverified} hash chains do not verify`);
    if (unlike) problems.push(`${unlike} conversations' read models differ from the fold of their stream`);
    log(`reconcile: ${streams.length} streams verified (${unverified} bad), ${unlike} read models unlike their fold`);
    // Every read model table equals a rebuild from position zero.
    const tables = [...new Set(PROJECTIONS.flatMap((p) => p.models.map((m) => m.table)))];
    for (const t of tables) await pool.query(`create table "soak_${t}" as select * from "${t}"`);
    await rebuildProjections(pool, store, PROJECTIONS);
    for (const t of tables) {
      const { rows } = await pool.query<{ n: string }>(
        `select count(*) as n from ((select to_jsonb(a) as r from "soak_${t}" a except all select to_jsonb(b) from "${t}" b)
          union all (select to_jsonb(b) from "${t}" b except all select to_jsonb(a) from "soak_${t}" a)) d`,
      );
      if (Number(rows[0].n) > 0) problems.push(`read model ${t}: ${rows[0].n} rows differ from its rebuild`);
    }
    log(`reconcile: ${tables.length} read-model tables compared with a rebuild`);
    // No turn slot or job left behind.
    const redis = new Redis({ port: stack.redisPort, host: '127.0.0.1', lazyConnect: true });
    await redis.connect();
    try {
      let slots = 0;
      for (const key of await redis.keys(`${stack.prefix}:turn-slots:*`)) slots += await redis.zcard(key);
      if (slots) problems.push(`${slots} turn slots still held`);
      let jobs = 0;
      for (const key of await redis.keys('*')) {
        if (/:(wait|active|paused|prioritized)$/.test(key)) {
          const type = await redis.type(key);
          jobs += type === 'list' ? await redis.llen(key) : type === 'zset' ? await redis.zcard(key) : 0;
        }
      }
      if (jobs) problems.push(`${jobs} jobs still waiting or active`);
      log(`reconcile: ${slots} turn slots and ${jobs} jobs left`);
    } finally {
      redis.disconnect();
    }
  } finally {
    await pool.end();
  }
  return problems;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const snapshots = options.heapSnapshotDir;
  if (snapshots) mkdirSync(snapshots, { recursive: true });
  const stack = await startSoakStack({
    worker: options.faultEveryMs > 0 && options.faults.includes('worker-kill'),
    env: options.env,
  });
  log(`soak: server ${stack.server.url}, database ${stack.db.name}, ${options.lanes} lanes, ${options.minutes} min`);
  const load = new Load(stack);
  const faults: SoakResult['faults'] = [];
  const rss: SoakResult['rss'] = [];
  try {
    const applied = await fetch(`${stack.server.url}/api/v1/catalog/apply`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(soakCatalog(stack.simulator.url, stack.mcpPort)),
    });
    if (applied.status !== 200) throw new Error(`catalog: ${applied.status} ${await applied.text()}`);
    load.nats = await connect({
      servers: `127.0.0.1:${stack.natsPort}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const started = Date.now();
    const durationMs = options.minutes * 60_000;
    const atS = () => Math.round((Date.now() - started) / 1000);
    let sampling = false;
    const sample = async () => {
      if (sampling) return;
      sampling = true;
      const memory = await stack.serverMemory().catch(() => null);
      sampling = false;
      const at = atS();
      if (memory)
        log(
          `memory at ${at}s: rss ${mb(stack.serverRss())} MB, heap after GC ${mb(memory.heapUsed)} MB, ${load.conversations} conversations`,
        );
      rss.push({
        atS: at,
        conversations: load.conversations,
        rssMb: mb(stack.serverRss()),
        heapUsedMb: memory ? mb(memory.heapUsed) : Number.NaN,
        externalMb: memory ? mb(memory.external) : Number.NaN,
      });
    };
    await sample();
    const sampler = setInterval(() => void sample(), options.sampleMs);
    const lanes = Array.from({ length: options.lanes }, () => load.lane());
    let snapshotted = false;
    // The faults, one at a time, each once the last has recovered.
    let next = 0;
    while (Date.now() - started < durationMs) {
      await sleep(Math.min(1000, durationMs - (Date.now() - started)));
      if (snapshots && !snapshotted && Date.now() - started > durationMs / 3) {
        snapshotted = true;
        await stack.serverHeapSnapshot(join(snapshots, 'third.heapsnapshot'));
        log(`heap snapshot at ${atS()}s`);
      }
      const due = options.faultEveryMs > 0 && Date.now() - started >= (faults.length + 1) * options.faultEveryMs;
      if (!due || Date.now() - started > durationMs - 15_000 || options.faults.length === 0) continue;
      const kind = options.faults[next++ % options.faults.length];
      const at = atS();
      const before = Date.now();
      log(`fault at ${at}s: ${kind}`);
      await injectFault(stack, kind);
      const recoveredMs = await ready(stack, 60_000);
      // Survived: turns end again within a minute of the fault.
      let survived = false;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250))
        if (load.lastTurnAt > before + 100 && load.lastTurnAt > Date.now() - 5000) {
          survived = true;
          break;
        }
      faults.push({
        kind,
        atS: at,
        recoveredMs: Date.now() - before,
        survived: survived && !Number.isNaN(recoveredMs),
      });
    }
    clearInterval(sampler);
    await sample();
    if (snapshots) await stack.serverHeapSnapshot(join(snapshots, 'end.heapsnapshot'));
    load.stopped = true;
    log(`soak: load stopped at ${atS()}s, waiting for the lanes`);
    await Promise.all(lanes);
    const elapsedS = (Date.now() - started) / 1000;
    await load.nats.close();
    const problems = await reconcile(stack, load, log);
    if (load.errors.length) log(`soak: first errors the clients saw:\n  ${load.errors.slice(0, 10).join('\n  ')}`);
    for (const f of faults) if (!f.survived) problems.push(`fault ${f.kind} at ${f.atS}s: turns did not resume`);
    // RSS drift over the second half: the spread of its samples against their first.
    const half = rss.filter((s) => s.atS >= elapsedS / 2);
    const driftOf = (values: number[]) =>
      values.length && values[0] ? (Math.max(...values) - values[0]) / values[0] : 0;
    const secondHalfDrift = driftOf(half.map((s) => s.rssMb));
    const heapDrift = driftOf(half.map((s) => s.heapUsedMb).filter((v) => !Number.isNaN(v)));
    const result: SoakResult = {
      ok: problems.length === 0,
      table: '',
      turns: load.turns,
      failedTurns: load.failedTurns,
      conversations: load.conversations,
      inputsTried: load.inputsTried,
      inputsAcknowledged: load.acked.size,
      inputsGivenUp: load.inputsGivenUp,
      faults,
      problems,
      rss,
      secondHalfDrift,
      heapDrift,
    };
    result.table = table(result, elapsedS);
    return result;
  } finally {
    load.stopped = true;
    await stack.close().catch((err: unknown) => log(`soak: closing: ${(err as Error).message}`));
  }
}

function table(r: SoakResult, elapsedS: number): string {
  const total = Object.values(r.turns).reduce((a, b) => a + b, 0);
  const rate = (n: number) => (n / elapsedS).toFixed(1);
  const rows: string[][] = [
    ['duration', `${(elapsedS / 60).toFixed(1)} min`],
    ['conversations started', String(r.conversations)],
    ['turns ended', `${total} (${rate(total)}/s)`],
    ...Object.entries(r.turns).map(([kind, n]) => [`  ${kind}`, `${n} (${rate(n)}/s)`]),
    ['turns failed (FA)', String(r.failedTurns)],
    ['inputs tried / acknowledged / given up', `${r.inputsTried} / ${r.inputsAcknowledged} / ${r.inputsGivenUp}`],
    [
      'faults survived',
      `${r.faults.filter((f) => f.survived).length} of ${r.faults.length}` +
        (r.faults.length
          ? ` (${r.faults.map((f) => `${f.kind} @${f.atS}s ${(f.recoveredMs / 1000).toFixed(1)}s`).join(', ')})`
          : ''),
    ],
    [
      'events lost',
      String(
        r.problems.filter((p) => p.includes('no event')).length
          ? r.problems.find((p) => p.includes('no event'))!.split(' ')[0]
          : 0,
      ),
    ],
    ['reconciliation', r.problems.length ? r.problems.join('; ') : 'passed'],
    ...pick(r.rss, 6).map((s) => [
      `RSS / heap used after GC / external at ${s.atS}s (${s.conversations} conversations)`,
      `${s.rssMb} / ${s.heapUsedMb} / ${s.externalMb} MB`,
    ]),
    ['RSS drift, second half', `${(r.secondHalfDrift * 100).toFixed(1)} %`],
    ['heap-after-GC drift, second half', `${(r.heapDrift * 100).toFixed(1)} %`],
  ];
  return ['| soak | |', '|---|---|', ...rows.map(([a, b]) => `| ${a} | ${b} |`)].join('\n');
}

/** `n` samples spread evenly over `all`, the first and the last among them. */
function pick<T>(all: T[], n: number): T[] {
  if (all.length <= n) return all;
  return Array.from({ length: n }, (_, i) => all[Math.round((i * (all.length - 1)) / (n - 1))]);
}

async function main(): Promise<void> {
  const env = process.env;
  const result = await runSoak({
    minutes: Number(env.SOAK_MINUTES ?? 10),
    lanes: Number(env.SOAK_LANES ?? 20),
    faultEveryMs: Number(env.SOAK_FAULT_EVERY_S ?? 30) * 1000,
    faults: FAULT_KINDS,
    sampleMs: Number(env.SOAK_SAMPLE_S ?? 10) * 1000,
    heapSnapshotDir: env.SOAK_HEAP_SNAPSHOTS,
    // SOAK_SERVER_ENV='{"CONVERSATION_CACHE_MB":"0"}': settings of the Parley processes.
    env: env.SOAK_SERVER_ENV ? (JSON.parse(env.SOAK_SERVER_ENV) as Record<string, string>) : undefined,
  });
  process.stdout.write(`${result.table}\n`);
  if (!result.ok) process.exitCode = 1;
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });

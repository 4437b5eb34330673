import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService, SpendBudgets } from '@parley/catalog';
import { loadConfig } from '@parley/config';
import { EVENT_STORE } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import { PG_POOL } from '@parley/platform';
import { createTestDatabase, startSimulator, until, type Simulator, type TestDatabase } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { AppModule } from '../apps/server/src/app.module';
import { ADMIN_KEY, callerOf, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * Spend budgets (docs/budgets.md): caps per subject, agent or action, per UTC day or month, that
 * model calls reserve their worst case against before they are made and settle to their cost.
 */
function budgetCatalog(simUrl: string) {
  const base = testCatalog(simUrl);
  const chat = base.actions[0];
  // Output tokens only: a call's worst case is then exactly what a full-length reply costs.
  const outputOnly = { ...base.models[0], code: 'SIM-OUT', llmInputTokenPrice: 0 };
  return {
    ...base,
    models: [...base.models, outputOnly],
    agents: [
      ...base.agents,
      { code: 'SALES', description: 'Sales', llmApplication: 'SUPPORT', llmAgentType: 'AUTO' },
      { code: 'GENERATE', description: 'Generate', llmApplication: 'SUPPORT', llmAgentType: 'AUTO' },
    ],
    actions: [
      ...base.actions,
      { ...chat, code: 'QUOTE', description: 'Quotes a price' },
      { ...chat, code: 'GENERATE', description: 'Generate' },
      { ...chat, code: 'HAMMER', description: 'Priced by output', llmModel: 'SIM-OUT' },
    ],
  };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** Every call of these tests reports this usage: 10 prompt and 256 completion tokens (tokenSizeMax). */
const TOKENS = { prompt: 10, completion: 256 };
/** Its cost at SIM-CHAT's prices (0.000001 in, 0.000002 out). */
const ACTUAL = 10 * 0.000001 + 256 * 0.000002;

describe('spend budgets that cannot be overspent', () => {
  let parley: ParleyUnderTest;
  let pool: Pool;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    parley = await startParley('budgets', { MAX_RUNNING_TURNS_PER_SUBJECT: '100' }, budgetCatalog);
    pool = parley.app.get(PG_POOL);
    for (const [subject, roles] of [
      ['hammer', ['client']],
      ['alice', ['client']],
      ['bob', ['client']],
      ['carol', ['client']],
      ['auditor', ['auditor']],
    ] as const) {
      keys[subject] = (await parley.call('POST', '/api/v1/keys', { subject, roles })).body.key as string;
    }
  });
  afterAll(() => parley.close());
  beforeEach(() => {
    parley.simulator.reset();
    parley.simulator.script([{ reply: { text: 'ok', tokens: TOKENS } }]);
  });

  const as = (subject: string) => (method: string, path: string, body?: unknown) =>
    parley.call(method, path, body, bearer(keys[subject]));
  const setBudget = (budget: Record<string, unknown>) =>
    parley.call('POST', '/api/v1/catalog/budgets', { description: 'test', ...budget });
  const turn = async (subject: string, agentCode = 'HELPDESK', actionCode = 'CHAT') => {
    const call = as(subject);
    const started = await call('POST', '/api/v1/conversations', { agentCode, actionCode });
    expect(started.status).toBe(201);
    const id = started.body.conversationId as string;
    const res = await call('POST', `/api/v1/conversations/${id}/messages`, {
      content: 'What is my balance?',
      timeoutMs: 30_000,
    });
    expect(res.status).toBe(200);
    return { id, body: res.body };
  };
  const spentOf = async (code: string) =>
    (
      await pool.query<{ spent: string }>(
        'select coalesce(sum(spent), 0)::text as spent from budget_periods where budget = $1',
        [code],
      )
    ).rows[0].spent;

  it('sets budgets through the admin API and the bundle, and names each bad field', async () => {
    const bad = await setBudget({ code: 'BAD', scope: 'planet', target: 'alice', period: 'week', cap: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    const paths = (bad.body.error.details.problems as { path: string }[]).map((p) => p.path).sort();
    expect(paths).toEqual(['cap', 'period', 'scope']);
    expect((await parley.call('GET', '/api/v1/catalog/budgets/BAD')).status).toBe(404);

    const missing = await setBudget({ code: 'BAD', scope: 'subject', period: 'day' });
    expect(missing.status).toBe(400);
    expect((missing.body.error.details.problems as { path: string }[]).map((p) => p.path).sort()).toEqual([
      'cap',
      'target',
    ]);

    const created = await setBudget({ code: 'API-SET', scope: 'agent', target: 'SALES', period: 'month', cap: 12.5 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      code: 'API-SET',
      scope: 'agent',
      target: 'SALES',
      period: 'month',
      cap: 12.5,
    });
    const updated = await parley.call('PUT', '/api/v1/catalog/budgets/API-SET', {
      description: 'raised',
      scope: 'agent',
      target: 'SALES',
      period: 'month',
      cap: 20,
    });
    expect(updated.status).toBe(200);
    expect(updated.body.cap).toBe(20);

    const applied = await parley.call('POST', '/api/v1/catalog/apply', {
      budgets: [
        { code: 'BUNDLED', description: 'from a bundle', scope: 'action', target: 'QUOTE', period: 'day', cap: 3 },
      ],
    });
    expect(applied.status).toBe(200);
    expect((await parley.call('GET', '/api/v1/catalog/budgets/BUNDLED')).body).toMatchObject({
      scope: 'action',
      cap: 3,
    });
    const badBundle = await parley.call('POST', '/api/v1/catalog/apply', {
      budgets: [{ code: 'B2', description: 'x', scope: 'action', target: 'NOTHING', period: 'year', cap: 3 }],
    });
    expect(badBundle.status).toBe(400);
    expect(JSON.stringify(badBundle.body.error.details)).toContain('budgets[0].period');
    // A target that names no agent or action, or nobody, would cap nothing.
    const unknown = await parley.call('POST', '/api/v1/catalog/apply', {
      budgets: [
        { code: 'B3', description: 'x', scope: 'action', target: 'NOTHING', period: 'day', cap: 3 },
        { code: 'B4', description: 'x', scope: 'subject', target: ' ', period: 'day', cap: 3 },
      ],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.problems).toEqual([
      { path: 'budgets[0].target', message: "unknown action 'NOTHING'" },
      { path: 'budgets[1].target', message: 'must not be empty' },
    ]);
    const typo = await setBudget({ code: 'B5', scope: 'agent', target: 'SALESS', period: 'day', cap: 1 });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details.problems[0].path).toMatch(/target$/);

    // Budgets are an admin's: a client can neither set nor read them.
    expect(
      (
        await as('alice')('POST', '/api/v1/catalog/budgets', {
          code: 'MINE',
          scope: 'subject',
          target: 'alice',
          period: 'day',
          cap: 100,
        })
      ).status,
    ).toBe(403);
    expect((await as('alice')('GET', '/api/v1/budgets/API-SET')).status).toBe(403);
    for (const code of ['API-SET', 'BUNDLED'])
      expect((await parley.call('DELETE', `/api/v1/catalog/budgets/${code}`)).status).toBe(204);
  });

  it('lets 50 concurrent turns of one subject spend up to the cap and never past it', async () => {
    const refused = await hammer(
      { url: parley.url, call: parley.call, simulator: parley.simulator, pool },
      keys.hammer,
    );
    // Each refusal is counted.
    const metrics = await fetch(`${parley.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(new RegExp(`budget_refusals_total\\{scope="subject",period="day"\\} ${refused}`));
  }, 120_000);

  it.each([
    ['subject', 'alice', 'day'],
    ['subject', 'alice', 'month'],
    ['agent', 'SALES', 'day'],
    ['agent', 'SALES', 'month'],
    ['action', 'QUOTE', 'day'],
    ['action', 'QUOTE', 'month'],
  ] as const)('enforces the cap of a budget on the %s %s, per %s', async (scope, target, period) => {
    const code = `CAP-${scope}-${period}`.toUpperCase();
    // Room for one call's worst case, not two: the second call of the period is refused. Day
    // budgets are set through the API, month budgets through a bundle.
    const budget = { code, description: 'test', scope, target, period, cap: 0.0009 };
    if (period === 'day') expect((await setBudget(budget)).status).toBe(201);
    else expect((await parley.call('POST', '/api/v1/catalog/apply', { budgets: [budget] })).status).toBe(200);
    try {
      const subject = scope === 'subject' ? 'alice' : 'bob';
      const [agent, action] = [scope === 'agent' ? 'SALES' : 'HELPDESK', scope === 'action' ? 'QUOTE' : 'CHAT'];
      const first = await turn(subject, agent, action);
      expect(first.body.status).toBe('CO');
      const second = await turn(subject, agent, action);
      expect(second.body).toMatchObject({ status: 'FA', reply: null, error: { code: 'BUDGET_EXCEEDED' } });
      expect(second.body.error.details).toMatchObject({ budget: code, scope, target, period, cap: 0.0009 });
      expect(second.body.error.details.spent).toBeCloseTo(ACTUAL, 12);
      const today = new Date().toISOString().slice(0, 10);
      expect(second.body.error.details.periodStart).toBe(period === 'day' ? today : `${today.slice(0, 7)}-01`);
      // Others are not held to it: another subject, agent or action.
      const other = await turn('carol');
      expect(other.body.status).toBe('CO');
    } finally {
      await parley.call('DELETE', `/api/v1/catalog/budgets/${code}`);
    }
  });

  it('settles a call to its actual cost and releases the rest of its worst case', async () => {
    expect((await setBudget({ code: 'SETTLE', scope: 'subject', target: 'carol', period: 'day', cap: 1 })).status).toBe(
      201,
    );
    parley.simulator.script([{ reply: { text: 'cheap', tokens: { prompt: 5, completion: 3 } } }]);
    const { id, body } = await turn('carol');
    expect(body.status).toBe('CO');
    const ledger = await parley.call('GET', '/api/v1/budgets/SETTLE/ledger');
    expect(ledger.status).toBe(200);
    expect(ledger.body).toHaveLength(1);
    const entry = ledger.body[0];
    const actual = 5 * 0.000001 + 3 * 0.000002;
    expect(entry).toMatchObject({
      conversationId: id,
      turnNo: 1,
      callNo: 1,
      subject: 'carol',
      agentCode: 'HELPDESK',
      actionCode: 'CHAT',
      model: 'sim-chat',
      status: 'settled',
    });
    expect(entry.actual).toBeCloseTo(actual, 12);
    // Reserved: the prompt estimate with headroom and all 256 tokens of tokenSizeMax.
    expect(entry.reserved).toBeGreaterThan(256 * 0.000002);
    expect(entry.settledAt).not.toBeNull();
    const standing = (await parley.call('GET', '/api/v1/budgets/SETTLE')).body;
    expect(standing.reserved).toBe(0);
    expect(standing.spent).toBeCloseTo(actual, 12);
    expect(Number(await spentOf('SETTLE'))).toBeCloseTo(actual, 12);
  });

  it("releases a crashed run's reservation: the turn's next call releases it, and a lapsed one holds nothing", async () => {
    expect(
      (await setBudget({ code: 'CRASH', scope: 'subject', target: 'bob', period: 'month', cap: 0.002 })).status,
    ).toBe(201);
    const budgets = parley.app.get(SpendBudgets);
    const applying = await budgets.applying({ subject: 'bob', agentCode: 'HELPDESK', actionCode: 'CHAT' });
    expect(applying.map((b) => b.code)).toEqual(['CRASH']);
    const started = await as('bob')('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    const crashedId = started.body.conversationId as string;
    // What a worker that died mid-call leaves: an open hold of most of the cap, far from its expiry.
    const left = await budgets.reserve(applying, {
      subject: 'bob',
      agentCode: 'HELPDESK',
      actionCode: 'CHAT',
      conversationId: crashedId,
      turnNo: 1,
      callNo: 1,
      model: 'sim-chat',
      amount: 0.0018,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    expect(left.ok).toBe(true);
    // While it is held, another conversation's call does not fit.
    const blocked = await turn('bob');
    expect(blocked.body.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { budget: 'CRASH', reserved: 0.0018 },
    });
    // The crashed conversation's own next call releases it, and runs.
    const resumed = await as('bob')('POST', `/api/v1/conversations/${crashedId}/messages`, {
      content: 'again',
      timeoutMs: 30_000,
    });
    expect(resumed.body.status).toBe('CO');
    const ledger = (await parley.call('GET', '/api/v1/budgets/CRASH/ledger')).body as {
      reservationId: string;
      status: string;
      note: string | null;
      conversationId: string;
    }[];
    const crashed = ledger.find((e) => left.ok && e.reservationId === left.id)!;
    expect(crashed).toMatchObject({ status: 'released', conversationId: crashedId });
    expect(crashed.note).toContain('ended without settling');
    expect(ledger.filter((e) => e.status === 'settled')).toHaveLength(1);

    // A hold past its expiry counts for nothing, and the ledger says it lapsed.
    const lapsed = await budgets.reserve(applying, {
      subject: 'bob',
      agentCode: 'HELPDESK',
      actionCode: 'CHAT',
      conversationId: crashedId,
      turnNo: 9,
      callNo: 1,
      model: 'sim-chat',
      amount: 0.0014,
      expiresAt: new Date(Date.now() + 300),
    });
    expect(lapsed.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 400));
    expect((await turn('bob')).body.status).toBe('CO');
    const after = (await parley.call('GET', '/api/v1/budgets/CRASH/ledger')).body as {
      reservationId: string;
      status: string;
    }[];
    expect(after.find((e) => lapsed.ok && e.reservationId === lapsed.id)!.status).toBe('expired');
    await parley.call('DELETE', '/api/v1/catalog/budgets/CRASH');
  });

  it('releases the hold of a call stopped by a kill', async () => {
    expect((await setBudget({ code: 'KILL', scope: 'agent', target: 'SALES', period: 'day', cap: 1 })).status).toBe(
      201,
    );
    parley.simulator.script([{ reply: { hang: true } }]);
    const started = await parley.call('POST', '/api/v1/conversations', { agentCode: 'SALES', actionCode: 'CHAT' });
    const id = started.body.conversationId as string;
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello', wait: false });
    const held = async () => (await parley.call('GET', '/api/v1/budgets/KILL')).body.reserved as number;
    for (const deadline = Date.now() + 10_000; (await held()) === 0 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    expect(await held()).toBeGreaterThan(0);
    expect((await parley.call('POST', `/api/v1/conversations/${id}/kill`, { reason: 'test' })).status).toBe(200);
    for (const deadline = Date.now() + 10_000; (await held()) > 0 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    expect(await held()).toBe(0);
    const [entry] = (await parley.call('GET', '/api/v1/budgets/KILL/ledger')).body;
    expect(entry).toMatchObject({ conversationId: id, status: 'released', actual: null });
    await parley.call('DELETE', '/api/v1/catalog/budgets/KILL');
  });

  it('answers generate with 402 BUDGET_EXCEEDED and the details', async () => {
    expect((await setBudget({ code: 'GEN', scope: 'action', target: 'GENERATE', period: 'day', cap: 0 })).status).toBe(
      201,
    );
    const res = await parley.call('POST', '/internal/llm/generate', {
      mode: 'chat',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { budget: 'GEN', scope: 'action', target: 'GENERATE', period: 'day', cap: 0, spent: 0, reserved: 0 },
    });
    expect(parley.simulator.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
    await parley.call('DELETE', '/api/v1/catalog/budgets/GEN');
  });

  it('shows the ledger to admins and auditors, and refuses clients', async () => {
    const auditor = await as('auditor')('GET', '/api/v1/budgets/SETTLE/ledger?limit=10');
    expect(auditor.status).toBe(200);
    expect(auditor.body.length).toBeGreaterThan(0);
    expect((await as('auditor')('GET', '/api/v1/budgets/SETTLE')).status).toBe(200);
    expect((await as('carol')('GET', '/api/v1/budgets/SETTLE/ledger')).status).toBe(403);
    expect((await parley.call('GET', '/api/v1/budgets/NONE/ledger')).status).toBe(404);
    const bad = await parley.call('GET', '/api/v1/budgets/SETTLE/ledger?limit=0&before=x');
    expect(bad.status).toBe(400);
    expect((bad.body.error.details.problems as { path: string }[]).map((p) => p.path)).toEqual(['limit', 'before']);
  });
});

interface Target {
  url: string;
  call: ParleyUnderTest['call'];
  simulator: Simulator;
  pool: Pool;
}

/**
 * 50 turns of the subject of `key` at once, against a day budget with room for 9.49 full-length
 * replies (256 tokens at 0.000002): at most 9 can be paid for, and one too many would show.
 * Returns how many were refused.
 */
async function hammer({ call, simulator, pool }: Target, key: string): Promise<number> {
  const full = 256 * 0.000002;
  const cap = 0.00486;
  const set = await call('POST', '/api/v1/catalog/budgets', {
    code: 'HAMMER',
    description: 'hammer',
    scope: 'subject',
    target: 'hammer',
    period: 'day',
    cap,
  });
  expect(set.status).toBe(201);
  simulator.script([{ reply: { text: 'ok', tokens: TOKENS } }]);
  // Slow streams, so that many calls hold their reservations at once.
  simulator.setLatency(50);
  const turns = await Promise.all(
    Array.from({ length: 50 }, async () => {
      const started = await call(
        'POST',
        '/api/v1/conversations',
        { agentCode: 'HELPDESK', actionCode: 'HAMMER' },
        bearer(key),
      );
      const id = started.body.conversationId as string;
      return call(
        'POST',
        `/api/v1/conversations/${id}/messages`,
        { content: 'Quote me', timeoutMs: 60_000 },
        bearer(key),
      );
    }),
  );
  simulator.setLatency(0);

  expect(turns.map((t) => t.status).filter((s) => s !== 200)).toEqual([]);
  const completed = turns.filter((t) => t.body.status === 'CO');
  const refused = turns.filter((t) => t.body.status === 'FA');
  expect(completed.length + refused.length).toBe(50);
  expect(completed.length).toBeGreaterThan(0);
  expect(completed.length).toBeLessThanOrEqual(9);
  expect(refused.length).toBeGreaterThan(0);
  for (const { body } of refused) {
    expect(body.error.code).toBe('BUDGET_EXCEEDED');
    const d = body.error.details;
    expect(d).toMatchObject({ budget: 'HAMMER', scope: 'subject', target: 'hammer', period: 'day', cap });
    // It did not fit: what was spent, what others held and this call's worst case pass the cap.
    expect(d.spent + d.reserved + d.amount).toBeGreaterThan(cap);
    expect(d.amount).toBeCloseTo(full, 12);
  }
  // Exact, in PostgreSQL's numeric: the spend is what the completed calls cost, within the cap.
  const { rows } = await pool.query<{ spent: string; within: boolean; settled: string; calls: number; open: number }>(
    `select p.spent::text as spent, p.spent <= $2::numeric as within,
            (select sum(actual)::text from budget_reservations r join budget_holds h on h.reservation_id = r.id
              where h.budget = $1 and r.status = 'settled') as settled,
            (select count(*)::int from budget_holds where budget = $1 and open) as open,
            (select count(*)::int from budget_holds where budget = $1) as calls
       from budget_periods p where p.budget = $1`,
    ['HAMMER', String(cap)],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0].within).toBe(true);
  expect(rows[0].settled).toBe(rows[0].spent);
  expect(rows[0].open).toBe(0);
  expect(rows[0].calls).toBe(completed.length);
  expect(Number(rows[0].spent)).toBeCloseTo(completed.length * full, 12);
  const standing = await call('GET', '/api/v1/budgets/HAMMER');
  expect(standing.body).toMatchObject({ code: 'HAMMER', cap, reserved: 0 });
  expect(standing.body.spent).toBeLessThanOrEqual(cap);
  return refused.length;
}

describe('spend budgets without Redis and NATS (the in-process queue)', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  let app: NestFastifyApplication;
  beforeAll(async () => {
    db = await createTestDatabase('budgets_inproc');
    simulator = await startSimulator();
    const config = loadConfig({
      DATABASE_URL: db.url,
      PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
      PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PARLEY_ADMIN_API_KEY: ADMIN_KEY,
      MAX_RUNNING_TURNS_PER_SUBJECT: '100',
      LOG_LEVEL: 'silent',
    });
    expect(config.redis.url).toBeNull();
    app = await createHttpApp(AppModule.forRoot(config), config, createLogger({ level: 'silent' }));
    await app.listen(0, '127.0.0.1');
    await app.get(CatalogService).apply(budgetCatalog(simulator.url), { dryRun: false });
  });
  afterAll(async () => {
    await app?.close();
    await simulator?.close();
    await db?.drop();
  });

  it('holds 50 concurrent turns of one subject to the cap', async () => {
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const call = callerOf(url);
    const key = (await call('POST', '/api/v1/keys', { subject: 'hammer', roles: ['client'] })).body.key as string;
    await hammer({ url, call, simulator, pool: app.get(PG_POOL) }, key);
  }, 120_000);
});

describe('spend budgets when the worker running a call is killed', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  let app: NestFastifyApplication;
  let call: ParleyUnderTest['call'];
  let env: Record<string, string>;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('budgets_crash');
    simulator = await startSimulator();
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
      PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PARLEY_ADMIN_API_KEY: ADMIN_KEY,
      QUEUE_LOCK_MS: '1000',
      LOG_LEVEL: 'silent',
    };
    const config = loadConfig(env);
    // This process takes commands only; the turn runs in a child worker.
    app = await createHttpApp(AppModule.forRoot(config, { worker: false }), config, createLogger({ level: 'silent' }));
    await app.listen(0, '127.0.0.1');
    call = callerOf(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
    await app.get(CatalogService).apply(budgetCatalog(simulator.url), { dryRun: false });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await app?.close();
    await simulator?.close();
    await db?.drop();
  });

  const startWorker = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', './tools/register.js', 'test/support/worker-child.ts'], {
        cwd: join(__dirname, '..'),
        env: { ...process.env, ...env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let err = '';
      child.stderr!.on('data', (d) => (err += String(d)));
      child.stdout!.on('data', (d) => /ready \d+/.test(String(d)) && resolve(child));
      child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${err}`)));
    });

  it("releases the dead run's reservation when another worker runs the turn, and settles the new call", async () => {
    expect(
      (
        await call('POST', '/api/v1/catalog/budgets', {
          code: 'WORKERS',
          description: 'helpdesk',
          scope: 'agent',
          target: 'HELPDESK',
          period: 'day',
          cap: 1,
        })
      ).status,
    ).toBe(201);
    simulator.script([
      { reply: { text: 'A reply that streams slowly, so that its worker dies in the middle of it.', tokens: TOKENS } },
    ]);
    simulator.setLatency(60);
    const first = await startWorker();
    const id = (await call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    expect(
      (await call('POST', `/api/v1/conversations/${id}/messages`, { content: 'tell me', wait: false })).status,
    ).toBe(202);
    const ledger = async () =>
      (await call('GET', '/api/v1/budgets/WORKERS/ledger')).body as {
        status: string;
        note: string | null;
        actual: number | null;
      }[];
    await until(async () => (await ledger()).some((e) => e.status === 'open'), 15_000, 50);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect((await call('GET', '/api/v1/budgets/WORKERS')).body.reserved).toBeGreaterThan(0);

    await startWorker();
    const store = app.get(EVENT_STORE);
    await until(
      async () =>
        (await store.readStream(`conversation-${id}`)).some(
          (e: { type: string }) => e.type === 'ConversationCompleted',
        ),
      30_000,
      100,
    );
    // A second run of the turn, if the queue started one, stops once it sees the turn completed.
    await until(async () => (await ledger()).every((e) => e.status !== 'open'), 15_000, 100);
    const entries = await ledger();
    // The dead run's reservation (the oldest) was released by the next run of the turn; the call
    // that completed the turn settled. (A second run the queue may start beside the first after a
    // crash reserves on its own; its call settles or is released when it stops.)
    expect(entries.at(-1)).toMatchObject({ status: 'released', note: 'released: its run ended without settling' });
    expect(entries.filter((e) => e.status === 'open' || e.status === 'expired')).toEqual([]);
    const settled = entries.filter((e) => e.status === 'settled');
    expect(settled.length).toBeGreaterThan(0);
    for (const e of settled) expect(e.actual).toBeCloseTo(ACTUAL, 12);
    const standing = (await call('GET', '/api/v1/budgets/WORKERS')).body;
    expect(standing.reserved).toBe(0);
    expect(standing.spent).toBeCloseTo(settled.length * ACTUAL, 12);
  }, 90_000);
});

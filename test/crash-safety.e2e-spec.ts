import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService } from '@parley/catalog';
import { type Config, loadConfig } from '@parley/config';
import { EVENT_STORE, type EventStore, type RecordedEvent } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import { createTestDatabase, startSimulator, type Simulator, type TestDatabase, until } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { TurnRunner } from '@parley/turn';
import { Queue } from 'bullmq';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { AppModule } from '../apps/server/src/app.module';
import { ADMIN_KEY, callerOf } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const ROOT = join(__dirname, '..');

describe('crash safety: a worker killed mid-turn loses nothing', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  let env: Record<string, string>;
  let config: Config;
  let app: NestFastifyApplication;
  let store: EventStore;
  let url: string;
  const children: ChildProcess[] = [];
  /** The HTTP tools' endpoint: the first call of each tool hangs long enough to kill its worker. */
  let toolServer: Server;
  const toolCalls = new Map<string, number>();

  beforeAll(async () => {
    db = await createTestDatabase('crash');
    simulator = await startSimulator();
    toolServer = createServer((req, res) => {
      const n = (toolCalls.get(req.url!) ?? 0) + 1;
      toolCalls.set(req.url!, n);
      setTimeout(() => res.end(JSON.stringify({ done: req.url, call: n })), n === 1 ? 5_000 : 0);
    });
    await new Promise<void>((r) => toolServer.listen(0, '127.0.0.1', r));
    const toolPort = (toolServer.address() as { port: number }).port;
    env = {
      DATABASE_URL: db.url,
      TOOL_HTTP_ALLOWED_HOSTS: `127.0.0.1:${toolPort}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
      PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PARLEY_ADMIN_API_KEY: ADMIN_KEY,
      QUEUE_LOCK_MS: '1000',
      // Streamed text on record every 100 ms, so a worker killed mid-stream leaves some behind.
      STREAM_EVENT_WINDOW_MS: '100',
      LOG_LEVEL: 'silent',
    };
    config = loadConfig(env);
    // This process takes commands only; turns run in the child workers.
    app = await createHttpApp(AppModule.forRoot(config, { worker: false }), config, createLogger({ level: 'silent' }));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    store = app.get(EVENT_STORE);
    const catalog = testCatalog(simulator.url);
    const httpTool = (code: string, idempotent: boolean) => ({
      code,
      description: `Slow ${idempotent ? 'idempotent' : 'one-shot'} tool.`,
      idempotent,
      config: { kind: 'http', url: `http://127.0.0.1:${toolPort}/${code}` },
    });
    catalog.tools.push(httpTool('SLOW_READ', true) as never, httpTool('SLOW_WRITE', false) as never);
    catalog.actions.push({ ...catalog.actions[0], code: 'SLOW', tools: ['SLOW_READ', 'SLOW_WRITE'] } as never);
    await app.get(CatalogService).apply(catalog, { dryRun: false });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await app.close();
    await simulator.close();
    await db.drop();
    toolServer.closeAllConnections();
    await new Promise((r) => toolServer.close(r));
  });

  /** The port each child serves HTTP on. */
  const ports = new Map<ChildProcess, number>();
  const startWorker = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', './tools/register.js', 'test/support/worker-child.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let err = '';
      child.stderr!.on('data', (d) => (err += String(d)));
      child.stdout!.on('data', (d) => {
        const ready = /ready (\d+)/.exec(String(d));
        if (!ready) return;
        ports.set(child, Number(ready[1]));
        resolve(child);
      });
      child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${err}`)));
    });

  /**
   * The real worker deployable (apps/worker), whose SIGTERM handler stops the application
   * gracefully, once it runs; the workers of earlier tests go first, so that it takes the turn.
   */
  const startWorkerDeployable = async (extraEnv: Record<string, string> = {}) => {
    for (const child of children) child.kill('SIGKILL');
    const worker = spawn(process.execPath, ['-r', './tools/register.js', 'apps/worker/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    let out = '';
    worker.stdout!.on('data', (d) => (out += String(d)));
    worker.stderr!.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    await until(() => out.includes('parley-worker running') || worker.exitCode !== null, 30_000, 50);
    expect(worker.exitCode).toBeNull();
    return { worker, exited, output: () => out };
  };

  const post = (path: string, body: unknown, to = url) => callerOf(to)('POST', path, body);
  const events = (id: string): Promise<RecordedEvent[]> => store.readStream(`conversation-${id}`);
  /**
   * A CHAT conversation whose message is recorded (wait: false) with no worker left to consume the
   * queue: its turn stays RU, as when the worker running it has died.
   */
  const turnNobodyRuns = async (content: string): Promise<string> => {
    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body.conversationId;
    for (const child of children) child.kill('SIGKILL');
    await post(`/api/v1/conversations/${id}/messages`, { content, wait: false });
    return id;
  };

  it('SIGKILLs the worker while the model streams; another worker finishes the turn from the events', async () => {
    const text = 'This answer streams slowly so that the worker dies in the middle of it and another one takes over.';
    simulator.script([{ reply: { text } }]);
    simulator.setLatency(60);
    const first = await startWorker();
    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body.conversationId;
    expect((await post(`/api/v1/conversations/${id}/messages`, { content: 'tell me', wait: false })).status).toBe(202);

    await until(async () => (await events(id)).some((e) => e.type === 'ChunksReceived'), 15_000, 50);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const atDeath = (await events(id)).map((e) => e.type);
    expect(atDeath).not.toContain('ModelCallCompleted');

    await startWorker();
    await until(async () => (await events(id)).some((e) => e.type === 'ConversationCompleted'), 30_000, 50);
    const all = await events(id);
    const replies = all.filter((e) => e.type === 'MessageRecorded' && (e.data as any).role === 'AS');
    expect(replies.map((e) => (e.data as any).content)).toEqual([text]);
    const starts = all.filter((e) => e.type === 'ModelCallStarted').map((e) => (e.data as any).attempt);
    expect(starts).toEqual([1, 2]);
    expect(all.at(-1)!.type).toBe('ConversationCompleted');
    expect((await store.verifyStream(`conversation-${id}`)).ok).toBe(true);
  }, 60_000);

  it('SIGKILLs the process that took the command and started the turn itself; another worker takes the turn over', async () => {
    for (const child of children) child.kill('SIGKILL');
    const text = 'This answer streams slowly, started in the process that accepted the message, which then dies.';
    simulator.script([{ reply: { text } }]);
    simulator.setLatency(60);
    const allInOne = await startWorker();
    const viaChild = `http://127.0.0.1:${ports.get(allInOne)}`;
    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, viaChild)).body
      .conversationId;
    expect(
      (await post(`/api/v1/conversations/${id}/messages`, { content: 'tell me', wait: false }, viaChild)).status,
    ).toBe(202);
    await until(async () => (await events(id)).some((e) => e.type === 'ChunksReceived'), 15_000, 50);
    // Started where the command ran: the queue holds the job back as a delayed lease, no worker has it.
    const turnStarted = (await events(id)).find((e) => e.type === 'TurnStarted')!;
    const jobs = new Queue('turns', { connection: { url: env.REDIS_URL }, prefix: env.PARLEY_PREFIX });
    try {
      expect(await (await jobs.getJob(`turn.${id}.${turnStarted.revision}`))!.getState()).toBe('delayed');
    } finally {
      await jobs.close();
    }
    allInOne.kill('SIGKILL');
    await new Promise((r) => allInOne.once('exit', r));
    expect((await events(id)).map((e) => e.type)).not.toContain('ModelCallCompleted');

    await startWorker();
    await until(async () => (await events(id)).some((e) => e.type === 'ConversationCompleted'), 30_000, 50);
    const all = await events(id);
    expect(
      all
        .filter((e) => e.type === 'MessageRecorded' && (e.data as any).role === 'AS')
        .map((e) => (e.data as any).content),
    ).toEqual([text]);
    expect(all.filter((e) => e.type === 'ModelCallStarted').map((e) => (e.data as any).attempt)).toEqual([1, 2]);
    expect((await store.verifyStream(`conversation-${id}`)).ok).toBe(true);
  }, 60_000);

  it.each([
    ['SLOW_READ', 'is idempotent: it runs again and the turn completes', 2],
    ['SLOW_WRITE', 'may not run twice: it is recorded as INTERRUPTED and the model is told', 1],
  ])(
    'SIGKILLs the worker while %s runs; a tool that %s',
    async (tool, _what, runs) => {
      for (const child of children) child.kill('SIGKILL');
      simulator.setLatency(0);
      simulator.script([
        { when: { noToolResult: true }, reply: { toolCalls: [{ name: tool, arguments: {} }] } },
        { when: { toolResult: {} }, reply: { text: 'Handled.' } },
      ]);
      const first = await startWorker();
      const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'SLOW' })).body
        .conversationId;
      await post(`/api/v1/conversations/${id}/messages`, { content: 'go', wait: false });
      await until(async () => toolCalls.get(`/${tool}`) === 1, 15_000, 50);
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));

      await startWorker();
      await until(async () => (await events(id)).some((e) => e.type === 'ConversationCompleted'), 30_000, 50);
      const all = await events(id);
      expect(toolCalls.get(`/${tool}`)).toBe(runs);
      const outcome = all.find((e) => e.type === 'ToolCallCompleted' || e.type === 'ToolCallFailed')!;
      if (runs === 2) expect(outcome).toMatchObject({ type: 'ToolCallCompleted', data: { name: tool } });
      else expect(outcome).toMatchObject({ type: 'ToolCallFailed', data: { name: tool, code: 'INTERRUPTED' } });
      expect(all.filter((e) => e.type === 'ToolCallStarted')).toHaveLength(1);
      expect(all.at(-1)!.data).toMatchObject({ reply: 'Handled.' });
    },
    60_000,
  );

  it('lets a worker deployable stopped with SIGTERM mid-turn finish the turn before it exits', async () => {
    const text = 'This answer streams slowly, so that the worker is asked to stop while it is still being written.';
    simulator.script([{ reply: { text } }]);
    simulator.setLatency(60);
    const { worker, exited } = await startWorkerDeployable();

    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body.conversationId;
    expect((await post(`/api/v1/conversations/${id}/messages`, { content: 'tell me', wait: false })).status).toBe(202);
    await until(async () => (await events(id)).some((e) => e.type === 'ChunksReceived'), 15_000, 50);
    worker.kill('SIGTERM');

    expect(await exited).toBe(0);
    // Finished by the worker that was stopping, before it exited: one model call, the whole reply.
    const all = await events(id);
    expect(all.at(-1)!.type).toBe('ConversationCompleted');
    expect(all.filter((e) => e.type === 'ModelCallStarted')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'MessageRecorded').map((e) => (e.data as any).content)).toEqual([
      'tell me',
      text,
    ]);
  }, 60_000);

  it('hands a turn still running at the end of SHUTDOWN_GRACE_MS on at once: the stopping worker exits cleanly, another finishes the turn', async () => {
    simulator.setLatency(5);
    simulator.script([{ reply: { hang: true }, times: 1 }, { reply: { text: 'Answered by the next worker.' } }]);
    // Leases far longer than the test: only the abort can hand the turn on in time.
    const { worker, exited, output } = await startWorkerDeployable({
      SHUTDOWN_GRACE_MS: '500',
      QUEUE_LOCK_MS: '60000',
    });

    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body.conversationId;
    expect(
      (await post(`/api/v1/conversations/${id}/messages`, { content: 'never answered here', wait: false })).status,
    ).toBe(202);
    // The model call hangs (LLM_CALL_TIMEOUT_MS is a minute): without the grace the worker would wait on it.
    const asked = () =>
      simulator.requests.some((r) => JSON.stringify(r.body?.messages ?? []).includes('never answered here'));
    await until(asked, 15_000, 50);
    const stoppedAt = Date.now();
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(8_000);
    expect(output()).toContain('stopped by the shutdown; its job is handed on');
    expect((await events(id)).at(-1)!.type).not.toBe('ConversationCompleted');

    await startWorker();
    await until(async () => (await events(id)).at(-1)!.type === 'ConversationCompleted', 20_000, 50);
    const all = await events(id);
    expect(all.filter((e) => e.type === 'MessageRecorded').map((e) => (e.data as any).content)).toEqual([
      'never answered here',
      'Answered by the next worker.',
    ]);
  }, 60_000);

  it('lets only one of two workers racing on the same turn write', async () => {
    simulator.setLatency(5);
    simulator.script([{ reply: { text: 'Exactly one of us answers.' } }]);
    const id = await turnNobodyRuns('race');
    // Run the same turn job twice in this process at once.
    const started = (await events(id)).find((e) => e.type === 'TurnStarted')!;
    const runner = app.get(TurnRunner);
    const job = { conversationId: id, turnNo: 1, revision: String(started.revision) };
    await Promise.all([runner.run(job), runner.run(job)]);
    const all = await events(id);
    expect(all.filter((e) => e.type === 'ModelCallCompleted')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'ConversationCompleted')).toHaveLength(1);
    const revisions = all.map((e) => Number(e.revision));
    expect(revisions).toEqual(revisions.map((_, i) => i));
  });

  it('leaves a turn resumed after its worker died to the resume’s job: the dead run’s job does nothing', async () => {
    simulator.setLatency(5);
    simulator.script([{ reply: { text: 'Answered once, by the resumed run.' } }]);
    const id = await turnNobodyRuns('hello?');
    expect((await post(`/api/v1/conversations/${id}/pause`, {})).body.status).toBe('PA');
    expect((await post(`/api/v1/conversations/${id}/resume`, {})).status).toBe(202);
    const before = await events(id);
    const started = before.find((e) => e.type === 'TurnStarted')!;
    const resumed = before.find((e) => e.type === 'TurnResumed')!;
    const runner = app.get(TurnRunner);
    const requests = simulator.requests.length;

    // The dead run's job comes back when its lease runs out, while the resumed turn goes on.
    await runner.run({ conversationId: id, turnNo: 1, revision: String(started.revision) });
    expect(simulator.requests).toHaveLength(requests);
    expect(await events(id)).toHaveLength(before.length);

    await runner.run({ conversationId: id, turnNo: 1, revision: String(resumed.revision) });
    const all = await events(id);
    expect(simulator.requests).toHaveLength(requests + 1);
    expect(all.filter((e) => e.type === 'ModelCallCompleted')).toHaveLength(1);
    expect(all.at(-1)).toMatchObject({ type: 'ConversationCompleted' });
  });
});

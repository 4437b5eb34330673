import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService } from '@parley/catalog';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import { correlationIdOf } from '@parley/tools';
import { createTestDatabase, startSimulator, until, type Simulator, type TestDatabase } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { connect, type NatsConnection } from 'nats';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { AppModule } from '../apps/server/src/app.module';
import { callerOf, testConfig, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** Remote tool subjects carry no prefix: unique ones keep parallel runs apart. */
const run = randomUUID().slice(0, 8);
const WEATHER = `weather-${run}.forecast`;
const SILENT = `silent-${run}.call`;
const LATER = `later-${run}.call`;
const CHECKED = `checked-${run}.call`;

/** The output schema of the CHECKED tool (its llmSchemaOutput): a forecast with a temperature. */
const FORECAST_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
};

function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  const remote = (code: string, subject: string, timeoutMs: number) => ({
    code,
    description: `Remote tool ${code}`,
    config: { kind: 'remote', subject, timeoutMs, schema: [{ parameter: 'city', type: 'string' }] },
  });
  return {
    ...base,
    domainSchemas: [{ code: 'FORECAST', description: 'A forecast', jsonSchema: FORECAST_SCHEMA }],
    tools: [
      ...base.tools,
      remote('WEATHER', WEATHER, 20_000),
      remote('SILENT', SILENT, 1_500),
      remote('LATER', LATER, 60_000),
      { ...remote('CHECKED', CHECKED, 60_000), llmSchemaOutput: 'FORECAST' },
    ],
    actions: [
      ...base.actions,
      { ...base.actions[0], code: 'REMOTE', tools: ['WEATHER', 'SILENT', 'LATER', 'CHECKED'] },
    ],
  };
}

/** The text of the last tool result the model was sent. */
const lastToolResult = (request: { messages: Array<{ role: string; content?: unknown }> }) =>
  String(request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '');

describe('remote tools answered over NATS', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  let nats: NatsConnection;
  let service: ChildProcess | null = null;
  let current: { app: NestFastifyApplication; call: ParleyUnderTest['call']; store: EventStore; url: string };
  // Both processes of the restart share the prefix (so the durable consumer) and the key.
  const fixedEnv = {
    PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
    PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };

  const startApp = async () => {
    const cfg = testConfig(db.url, { ...fixedEnv, PORT: '0' });
    const app = await createHttpApp(AppModule.forRoot(cfg), cfg, createLogger({ level: 'silent' }));
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    current = { app, call: callerOf(url), store: app.get(EVENT_STORE), url };
    return current;
  };

  beforeAll(async () => {
    db = await createTestDatabase('remote_tools');
    simulator = await startSimulator();
    nats = await connect({ servers: 'nats://127.0.0.1:4222' });
    await startApp();
    await current.app.get(CatalogService).apply(catalog(simulator.url), { dryRun: false });
  }, 30_000);
  afterAll(async () => {
    service?.kill('SIGTERM');
    await current?.app.close().catch(() => undefined);
    const jsm = await nats.jetstreamManager();
    for (const suffix of ['REMOTE_TOOLS', 'TOOL_REPLIES'])
      await jsm.streams.delete(`${prefix().toUpperCase()}_${suffix}`).catch(() => undefined);
    await nats?.drain();
    await simulator.close();
    await db.drop();
  });
  beforeEach(() => simulator.reset());

  const prefix = () => fixedEnv.PARLEY_PREFIX;
  const start = async () =>
    (await current.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'REMOTE' })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    current.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const events = (id: string) => current.store.readStream(`conversation-${id}`);
  const dataOf = async (id: string, type: string) =>
    (await events(id)).filter((e) => e.type === type).map((e) => e.data as any);
  const statusOf = async (id: string) =>
    (await current.call('GET', `/api/v1/conversations/${id}`)).body.llmProcessStatus as string;
  const completed = async (id: string) => {
    await until(async () => (await statusOf(id)) === 'CO', 20_000, 100);
    return (await dataOf(id, 'ConversationCompleted'))[0];
  };
  /** Waits until Parley's consumer has taken and acknowledged every completion published so far. */
  const completionsSettled = async () => {
    const jsm = await nats.jetstreamManager();
    const stream = `${prefix().toUpperCase()}_TOOL_REPLIES`;
    await until(
      async () => {
        const info = await jsm.consumers.info(stream, 'parley-tool-replies');
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      10_000,
      50,
    );
  };
  const publishCompletion = (id: string, body: unknown) =>
    nats.jetstream().publish(`${prefix()}.tool-replies.${id}`, typeof body === 'string' ? body : JSON.stringify(body));
  const callTool = (name: string, city: string) =>
    simulator.script([
      { when: { toolResult: { name } }, reply: (req) => ({ text: `Tool said: ${lastToolResult(req as any)}` }) },
      { when: { noToolResult: true }, reply: { toolCalls: [{ name, arguments: { city } }] } },
    ]);

  it('publishes the invocation, waits in WA without a worker, and resumes with the answer of a separate process', async () => {
    const seen: unknown[] = [];
    const tap = nats.subscribe(WEATHER, { callback: (_e, m) => seen.push(m.json()) });
    service = spawn(
      process.execPath,
      ['-r', './tools/register.js', 'examples/remote-tool/service.ts', 'nats://127.0.0.1:4222', prefix(), WEATHER],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const id = await start();
    callTool('WEATHER', 'Paris');
    const waiting = await send(id, 'weather in Paris?');
    expect(['WA', 'CO']).toContain(waiting.body.status);

    const done = await completed(id);
    expect(done.reply).toBe('Tool said: {"city":"Paris","forecast":"sunny, 11 °C"}');
    const [invoked] = await dataOf(id, 'RemoteToolInvoked');
    expect(invoked).toMatchObject({ name: 'WEATHER', subject: WEATHER, turnNo: 1 });
    expect(seen).toEqual([
      {
        correlationId: invoked.correlationId,
        skillName: 'WEATHER',
        arguments: { city: 'Paris' },
        replyTo: `${prefix()}.tool-replies.${id}`,
        conversationId: id,
        toolCallId: invoked.toolCallId,
        deadline: invoked.deadline,
      },
    ]);
    const types = (await events(id)).map((e) => e.type);
    // The run that published the call ended there; the completion resumed the turn in a new one.
    expect(types.slice(types.indexOf('RemoteToolInvoked'), types.indexOf('RemoteToolInvoked') + 3)).toEqual([
      'RemoteToolInvoked',
      'ToolCallCompleted',
      'TurnResumed',
    ]);
    expect(types.at(-1)).toBe('ConversationCompleted');
    // The tool-calls read model shows the call as a remote one, completed.
    const remoteCall = async () =>
      ((await current.call('GET', `/api/v1/conversations/${id}/tool-calls`)).body as any[]).find(
        (c) => c.llmToolCallId === invoked.toolCallId,
      );
    await until(async () => (await remoteCall())?.status === 'completed', 10_000, 50);
    expect(await remoteCall()).toMatchObject({ kind: 'remote', llmToolCallName: 'WEATHER', errorCode: null });
    tap.unsubscribe();

    // The same completion again, and a late different one: acknowledged, nothing recorded.
    const before = (await events(id)).length;
    await publishCompletion(id, { correlationId: invoked.correlationId, result: 'a second answer' });
    await completionsSettled();
    expect((await events(id)).length).toBe(before);
  }, 40_000);

  it('passes a service error to the model as a TOOL_ERROR', async () => {
    const id = await start();
    callTool('WEATHER', 'Atlantis');
    await send(id, 'weather in Atlantis?');
    const done = await completed(id);
    expect(done.reply).toContain('No forecast for Atlantis. (UNKNOWN_CITY)');
    expect((await dataOf(id, 'ToolCallFailed'))[0]).toMatchObject({ name: 'WEATHER', code: 'TOOL_ERROR' });
  }, 30_000);

  it('fails a call unanswered by its deadline as TIMEOUT, and the turn goes on with the model seeing it', async () => {
    const id = await start();
    callTool('SILENT', 'Oslo');
    const started = Date.now();
    await send(id, 'anything from the silent tool?');
    const done = await completed(id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    const [failed] = await dataOf(id, 'ToolCallFailed');
    expect(failed).toMatchObject({ name: 'SILENT', code: 'TIMEOUT' });
    expect(done.reply).toContain('did not answer by its deadline');

    const metrics = await (await fetch(`${current.url}/metrics`)).text();
    expect(metrics).toMatch(/llm_tool_call_count\{kind="remote",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/llm_tool_call_count\{kind="remote",outcome="error"\} [1-9]/);
    expect(metrics).toMatch(/llm_tool_call_count\{kind="remote",outcome="timeout"\} 1/);

    // An answer after the deadline changes nothing.
    const [invoked] = await dataOf(id, 'RemoteToolInvoked');
    const before = (await events(id)).length;
    await publishCompletion(id, { correlationId: invoked.correlationId, result: 'too late' });
    await completionsSettled();
    expect((await events(id)).length).toBe(before);
  }, 30_000);

  it('times a call out after a pause that outlasted its deadline, once the conversation is resumed', async () => {
    const id = await start();
    callTool('SILENT', 'Bergen');
    await send(id, 'pause me');
    await until(async () => (await dataOf(id, 'RemoteToolInvoked')).length === 1, 10_000, 50);
    expect((await current.call('POST', `/api/v1/conversations/${id}/pause`, {})).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await dataOf(id, 'ToolCallFailed')).toEqual([]);
    expect((await current.call('POST', `/api/v1/conversations/${id}/resume`, {})).status).toBe(200);
    const done = await completed(id);
    expect((await dataOf(id, 'ToolCallFailed'))[0]).toMatchObject({ name: 'SILENT', code: 'TIMEOUT' });
    expect(done.reply).toContain('did not answer by its deadline');
  }, 30_000);

  it('keeps a completion that arrives before the turn recorded its call, and resumes the turn with it', async () => {
    const id = await start();
    simulator.setLatency(150);
    simulator.script([
      {
        when: { toolResult: { name: 'LATER' } },
        reply: (req) => ({ text: `Tool said: ${lastToolResult(req as any)}` }),
      },
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'LATER', arguments: { city: 'Quick' }, id: 'call_early' }] },
      },
    ]);
    const sent = await current.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'fast', wait: false });
    expect(sent.status).toBeLessThan(300);
    await publishCompletion(id, { correlationId: correlationIdOf(id, 'call_early'), result: 'answered early' });
    const done = await completed(id);
    expect(done.reply).toBe('Tool said: answered early');
    const types = (await events(id)).map((e) => e.type);
    expect(types.indexOf('RemoteToolInvoked')).toBeLessThan(types.indexOf('ToolCallCompleted'));
  }, 30_000);

  it("checks a completion against the tool's llmSchemaOutput: a mismatch fails the call as INVALID_OUTPUT, naming the problem", async () => {
    const answer = async (city: string, result: unknown) => {
      const id = await start();
      callTool('CHECKED', city);
      await send(id, `forecast for ${city}?`);
      await until(async () => (await dataOf(id, 'RemoteToolInvoked')).length === 1, 10_000, 50);
      const [invoked] = await dataOf(id, 'RemoteToolInvoked');
      await publishCompletion(id, { correlationId: invoked.correlationId, result });
      return { id, done: await completed(id) };
    };

    const good = await answer('Lima', { city: 'Lima', celsius: 19 });
    expect(good.done.reply).toBe('Tool said: {"city":"Lima","celsius":19}');
    expect(await dataOf(good.id, 'ToolCallFailed')).toEqual([]);

    const bad = await answer('Quito', { city: 'Quito', celsius: 'mild' });
    const [failed] = await dataOf(bad.id, 'ToolCallFailed');
    expect(failed).toMatchObject({ name: 'CHECKED', code: 'INVALID_OUTPUT' });
    expect(failed.message).toContain('/celsius');
    expect(await dataOf(bad.id, 'ToolCallCompleted')).toEqual([]);
    // The model is told why, and the turn goes on to its end.
    expect(bad.done.reply).toContain('does not match its output schema');

    const text = await answer('Sucre', 'sunny and warm');
    expect((await dataOf(text.id, 'ToolCallFailed'))[0]).toMatchObject({ name: 'CHECKED', code: 'INVALID_OUTPUT' });
    expect(text.done.reply).toContain('not JSON');
  }, 40_000);

  it('acknowledges malformed and unknown completions and records nothing', async () => {
    const id = await start();
    callTool('LATER', 'Rome');
    await send(id, 'later please');
    await until(async () => (await dataOf(id, 'RemoteToolInvoked')).length === 1, 10_000, 50);
    const before = (await events(id)).length;
    await publishCompletion(id, 'not json at all');
    await publishCompletion(id, { correlationId: 5, result: 'x' });
    await publishCompletion(id, { correlationId: 'c', result: 'x', error: { message: 'both' } });
    await publishCompletion(id, { correlationId: 'c' });
    await publishCompletion(id, { correlationId: randomUUID(), result: 'unknown call' });
    await publishCompletion(randomUUID(), { correlationId: randomUUID(), result: 'unknown conversation' });
    await completionsSettled();
    expect((await events(id)).length).toBe(before);
    expect((await events(id)).at(-1)?.type).toBe('RemoteToolInvoked');
    await until(async () => (await statusOf(id)) === 'WA', 5_000, 50);
  }, 30_000);

  it('resumes the turn with a completion published while Parley was stopped', async () => {
    const id = await start();
    callTool('LATER', 'Lisbon');
    await send(id, 'answer after a restart');
    await until(async () => (await dataOf(id, 'RemoteToolInvoked')).length === 1, 10_000, 50);
    const [invoked] = await dataOf(id, 'RemoteToolInvoked');
    await current.app.close();

    await publishCompletion(id, { correlationId: invoked.correlationId, result: 'answered while Parley was down' });
    await startApp();
    const done = await completed(id);
    expect(done.reply).toBe('Tool said: answered while Parley was down');
  }, 40_000);

  it('refuses a remote tool without a subject, naming the path, and stores nothing', async () => {
    const res = await current.call('POST', '/api/v1/catalog/apply', {
      tools: [{ code: 'NO_SUBJECT', description: 'Broken', config: { kind: 'remote', timeoutMs: 1000 } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toEqual(['tools[0].config.subject']);
    expect((await current.call('GET', '/api/v1/catalog/tools/NO_SUBJECT')).status).toBe(404);
  });
});

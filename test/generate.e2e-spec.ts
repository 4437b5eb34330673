import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import {
  createTestDatabase,
  freePort,
  killProcess,
  startEverythingHttp,
  startSimulator,
  type Simulator,
  type TestDatabase,
} from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { connect, headers } from 'nats';
import { CatalogService } from '@parley/catalog';
import { AppModule } from '../apps/server/src/app.module';
import { ADMIN_KEY, callerOf, testConfig } from './support/parley-app';

/** Seed 004 §4's request, verbatim. */
const SEED_REQUEST = {
  mode: 'rag',
  system_prompt: 'You are Visior, the internal AI assistant...',
  messages: [{ role: 'user', content: 'Как настроить LDAP интеграцию?' }],
  context_chunks: [
    {
      doc_id: 'doc_123',
      section_id: 'sec_ldap',
      text: 'Для настройки LDAP интеграции...',
      page_start: 6,
      page_end: 7,
    },
  ],
  generation_params: {
    max_tokens: 512,
    temperature: 0.2,
    top_p: 0.95,
    presence_penalty: 0.0,
    frequency_penalty: 0.0,
    stop: ['</answer>'],
  },
  trace_id: 'abc-def-123',
};
const SEED_ANSWER = 'Чтобы настроить LDAP интеграцию в Orion X, выполните...';
const MODEL = 'local-llama-3-8b';

/**
 * A Parley configured by environment alone (seed 004 §11) on a fresh database: no catalog
 * apply. LLM_RUNTIME_URL points at the simulator, MCP_PROXY_URL at server-everything over
 * streamable HTTP.
 */
async function startFromEnvironment(
  label: string,
  env: Record<string, string>,
  onDb?: TestDatabase,
  logs?: Record<string, unknown>[],
) {
  const db: TestDatabase = onDb ?? (await createTestDatabase(label));
  const config = testConfig(db.url, { PORT: '0', ...env });
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logs?.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const logger = logs ? createLogger({ level: 'info' }, destination) : createLogger({ level: 'silent' });
  const app: NestFastifyApplication = await createHttpApp(AppModule.forRoot(config), config, logger);
  await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  return { db, app, url, config, call: callerOf(url) };
}

describe('POST /internal/llm/generate (seed 004), configured by environment alone', () => {
  let simulator: Simulator;
  let everything: ChildProcess;
  let parley: Awaited<ReturnType<typeof startFromEnvironment>>;
  let store: EventStore;
  const generate = (body: unknown) => parley.call('POST', '/internal/llm/generate', body);

  beforeAll(async () => {
    simulator = await startSimulator();
    const port = await freePort();
    everything = await startEverythingHttp('streamableHttp', port);
    parley = await startFromEnvironment('generate', {
      LLM_RUNTIME_URL: simulator.url,
      DEFAULT_MODEL_NAME: MODEL,
      MCP_PROXY_URL: `http://127.0.0.1:${port}/mcp`,
      LLM_RETRY_DELAY_MS: '5',
      LLM_CALL_TIMEOUT_MS: '700',
      // Small, so a tool output over it needs no large reply from the simulator under load.
      MAX_TOOL_OUTPUT_BYTES: '2000',
    });
    store = parley.app.get(EVENT_STORE);
  }, 60_000);
  afterAll(async () => {
    await parley?.app.close();
    await parley?.db.drop();
    await simulator?.close();
    if (everything) await killProcess(everything);
  });
  beforeEach(() => simulator.reset());

  const eventsOf = async (conversationId: string) =>
    (await store.readStream(`conversation-${conversationId}`)).map((e) => ({ type: e.type, data: e.data as any }));

  it('keeps the provider, model and GENERATE action in the catalog, derived from the variables', async () => {
    const action = await parley.call('GET', '/api/v1/actions/GENERATE');
    expect(action.status).toBe(200);
    const model = await parley.call('GET', '/api/v1/catalog/models/ENV-DEFAULT');
    expect(model.body).toMatchObject({ llmModelName: MODEL, llmProvider: 'ENV' });
    const provider = await parley.call('GET', '/api/v1/catalog/providers/ENV');
    expect(provider.body).toMatchObject({ baseUrl: simulator.url, providerType: 'openai-compatible' });
    const mcp = await parley.call('GET', '/api/v1/mcp-clients/mcp-proxy');
    expect(mcp.body).toMatchObject({ name: 'mcp-proxy', mcpTransportType: 'SH' });
  });

  it("answers seed 004's rag example field by field, with the chunks between system prompt and user message", async () => {
    simulator.script([{ reply: { text: SEED_ANSWER, tokens: { prompt: 1180, completion: 210 } } }]);
    const res = await generate(SEED_REQUEST);
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe(SEED_ANSWER);
    expect(res.body.used_tokens).toEqual({ prompt: 1180, completion: 210 });
    expect(res.body.tools_called).toEqual([]);
    expect(res.body.meta).toMatchObject({ model_name: MODEL, tool_steps: 0, trace_id: 'abc-def-123' });
    expect(typeof res.body.meta.latency_ms).toBe('number');
    expect(Object.keys(res.body).sort()).toEqual(['answer', 'meta', 'tools_called', 'used_tokens']);

    const [request] = simulator.requests;
    const body = request.body as any;
    expect(body.model).toBe(MODEL);
    expect(body).toMatchObject({ temperature: 0.2, top_p: 0.95, stop: ['</answer>'] });
    expect(body.presence_penalty ?? 0).toBe(0);
    const roles = body.messages.map((m: any) => m.role);
    expect(roles).toEqual(['system', 'system', 'user']);
    expect(body.messages[0].content).toBe(SEED_REQUEST.system_prompt);
    expect(body.messages[1].content).toMatch(/^Below are relevant sections/);
    expect(body.messages[1].content).toContain('Для настройки LDAP интеграции...');
    expect(body.messages[2].content).toBe('Как настроить LDAP интеграцию?');
  });

  it('records the call as a one-shot conversation that verifies and replays', async () => {
    simulator.script([{ reply: { text: 'Recorded.' } }]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'hello' }] });
    const id = res.body.meta.conversation_id;
    const types = (await eventsOf(id)).map((e) => e.type);
    expect(types[0]).toBe('ConversationStarted');
    expect(types).toEqual(expect.arrayContaining(['MessageRecorded', 'TurnStarted', 'ModelCallCompleted']));
    expect(types.at(-1)).toBe('ConversationCompleted');
    const verified = await parley.call('GET', `/api/v1/conversations/${id}/verify`);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ ok: true });
    // Replayed: the stream folds to the call's outcome, and its first event holds what the call ran with.
    const state = await parley.call('GET', `/api/v1/conversations/${id}/state`);
    expect(state.body.state).toMatchObject({ status: 'CO', snapshot: { model: { name: MODEL } } });
    expect(state.body.state.transcript.map((m: any) => [m.role, m.content])).toEqual([
      ['US', 'hello'],
      ['AS', 'Recorded.'],
    ]);
    const started = await parley.call('GET', `/api/v1/conversations/${id}/state?atRevision=0`);
    expect(started.body.state).toMatchObject({ status: 'NS', agentCode: 'GENERATE', actionCode: 'GENERATE' });
  });

  it('answers a retry with the same Idempotency-Key from the first call, and refuses the key with another request', async () => {
    simulator.script([{ reply: { text: 'Once only.', tokens: { prompt: 12, completion: 3 } } }]);
    const key = { 'idempotency-key': `gen-${Date.now()}` };
    const request = { mode: 'chat', messages: [{ role: 'user', content: 'say it once' }] };
    const first = await parley.call('POST', '/internal/llm/generate', request, key);
    expect(first.status).toBe(200);
    const revisions = (await eventsOf(first.body.meta.conversation_id)).length;
    const again = await parley.call('POST', '/internal/llm/generate', request, key);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      answer: 'Once only.',
      used_tokens: { prompt: 12, completion: 3 },
      meta: { conversation_id: first.body.meta.conversation_id },
    });
    expect(simulator.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
    expect(await eventsOf(first.body.meta.conversation_id)).toHaveLength(revisions);

    const other = await parley.call(
      'POST',
      '/internal/llm/generate',
      { ...request, messages: [{ role: 'user', content: 'something else' }] },
      key,
    );
    expect([other.status, other.body.error.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    // Without a key, the same request is a new call.
    const unkeyed = await generate(request);
    expect(unkeyed.body.meta.conversation_id).not.toBe(first.body.meta.conversation_id);
  });

  it('sends earlier messages as history, in chat mode', async () => {
    simulator.script([{ reply: { text: 'Third.' } }]);
    const res = await generate({
      mode: 'chat',
      system_prompt: 'Be brief.',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Third.');
    const sent = (simulator.requests[0].body as any).messages.map((m: any) => [m.role, m.content]);
    expect(sent).toEqual([
      ['system', 'Be brief.'],
      ['user', 'one'],
      ['assistant', 'two'],
      ['user', 'three'],
    ]);
  });

  it('runs an MCP tool of MCP_PROXY_URL and reports it in tools_called', async () => {
    const echo = 'mcp-proxy__echo';
    simulator.script([
      { when: { toolResult: { name: echo } }, reply: { text: 'Echoed.' } },
      { reply: { toolCalls: [{ name: echo, arguments: { message: 'hi' } }] } },
    ]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'echo hi' }] });
    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Echoed.');
    expect(res.body.tools_called).toEqual([{ name: echo, arguments: { message: 'hi' }, result_summary: 'Echo: hi' }]);
    expect(res.body.meta.tool_steps).toBe(1);
    const offered = ((simulator.requests[0].body as any).tools ?? []).map((t: any) => t.function.name);
    expect(offered).toContain(echo);
  });

  it('answers 422 LLM_LIMIT_EXCEEDED past 3 tool steps (seed 004 default)', async () => {
    simulator.script([{ reply: { toolCalls: [{ name: 'mcp-proxy__echo', arguments: { message: 'again' } }] } }]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'loop' }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: { code: 'LLM_LIMIT_EXCEEDED', message: expect.any(String) } });
  });

  it('answers 422 LLM_LIMIT_EXCEEDED when a tool returns more text than MAX_TOOL_OUTPUT_BYTES (seed 004 §9.3)', async () => {
    const message = 'x'.repeat(5_000);
    simulator.script([
      { when: { toolResult: { name: 'mcp-proxy__echo' } }, reply: { text: 'Too late.' } },
      { reply: { toolCalls: [{ name: 'mcp-proxy__echo', arguments: { message } }] } },
    ]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'echo a lot' }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: {
        code: 'LLM_LIMIT_EXCEEDED',
        message: "The output of tool 'mcp-proxy__echo' is over the limit of 2000 bytes.",
      },
    });
    // The model never saw the cut output: one model call, the tool's, and the end.
    expect(simulator.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
  });

  it('answers 502 LLM_RUNTIME_ERROR after two tool errors in a row, each fed back to the model', async () => {
    simulator.script([{ reply: { toolCalls: [{ name: 'mcp-proxy__no-such-tool', arguments: {} }] } }]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'break' }] });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: { code: 'LLM_RUNTIME_ERROR', message: 'Two tool calls in a row failed.' } });
    // The first error went back to the model as a tool result.
    expect(simulator.requests.length).toBe(2);
    expect((simulator.requests[1].body as any).messages.some((m: any) => m.role === 'tool')).toBe(true);
  });

  it('answers 502 LLM_RUNTIME_ERROR when the runtime fails, after one retry', async () => {
    simulator.script([{ reply: { fail: { status: 503, message: 'overloaded' } } }]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: { code: 'LLM_RUNTIME_ERROR', message: expect.any(String) } });
    expect(simulator.requests.length).toBe(2);
  });

  it('answers 504 LLM_RUNTIME_ERROR when the model times out, after one retry', async () => {
    simulator.script([{ reply: { hang: true } }]);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      error: { code: 'LLM_RUNTIME_ERROR', message: expect.stringMatching(/took longer than 700 ms/) },
    });
    expect(simulator.requests.length).toBe(2);
  }, 15_000);

  it('answers 422 LLM_LIMIT_EXCEEDED for a prompt over MAX_PROMPT_TOKENS (4k)', async () => {
    const long = 'word '.repeat(5000);
    const res = await generate({ mode: 'chat', messages: [{ role: 'user', content: long }] });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('LLM_LIMIT_EXCEEDED');
    expect(simulator.requests.length).toBe(0);
  });

  it.each([
    ['no mode', { messages: [{ role: 'user', content: 'x' }] }, 'mode'],
    ['no messages', { mode: 'chat', messages: [] }, 'messages'],
    ['an assistant message last', { mode: 'chat', messages: [{ role: 'assistant', content: 'x' }] }, 'messages.0'],
    ['chunks in chat mode', { ...SEED_REQUEST, mode: 'chat' }, 'context_chunks'],
    [
      'a temperature over 2',
      { ...SEED_REQUEST, generation_params: { temperature: 3 } },
      'generation_params.temperature',
    ],
    [
      'five stop sequences',
      { ...SEED_REQUEST, generation_params: { stop: ['a', 'b', 'c', 'd', 'e'] } },
      'generation_params.stop',
    ],
    ['an unknown field', { ...SEED_REQUEST, extra: 1 }, ''],
  ])('answers 400 VALIDATION_FAILED for %s, and records nothing', async (_name, body, path) => {
    const before = await store.headPosition();
    const res = await generate(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(res.body.error.details?.problems ?? [])).toContain(path);
    expect(await store.headPosition()).toBe(before);
    expect(simulator.requests.length).toBe(0);
  });

  it('answers the same over NATS (<prefix>.cmd.generate)', async () => {
    simulator.script([{ reply: { text: SEED_ANSWER, tokens: { prompt: 1180, completion: 210 } } }]);
    const nc = await connect({ servers: parley.config.nats.url! });
    try {
      const h = headers();
      h.set('authorization', `Bearer ${ADMIN_KEY}`);
      const msg = await nc.request(`${parley.config.prefix}.cmd.generate`, JSON.stringify(SEED_REQUEST), {
        headers: h,
        timeout: 15_000,
      });
      const { result } = JSON.parse(msg.string());
      expect(result).toMatchObject({
        answer: SEED_ANSWER,
        used_tokens: { prompt: 1180, completion: 210 },
        tools_called: [],
        meta: { model_name: MODEL, tool_steps: 0, trace_id: 'abc-def-123' },
      });
    } finally {
      await nc.close();
    }
  });
});

describe('generate with a runtime without a tools API (LLM_RUNTIME_TOOLS=text, ENABLE_JSON_MODE)', () => {
  let simulator: Simulator;
  let everything: ChildProcess;
  let parley: Awaited<ReturnType<typeof startFromEnvironment>>;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    simulator = await startSimulator();
    const port = await freePort();
    everything = await startEverythingHttp('streamableHttp', port);
    parley = await startFromEnvironment(
      'gentext',
      {
        LLM_RUNTIME_URL: simulator.url,
        LLM_RUNTIME_TOOLS: 'text',
        ENABLE_JSON_MODE: 'true',
        DEFAULT_MODEL_NAME: 'sim-text-tools',
        MCP_PROXY_URL: `http://127.0.0.1:${port}/mcp`,
      },
      undefined,
      logs,
    );
  }, 60_000);
  afterAll(async () => {
    await parley?.app.close();
    await parley?.db.drop();
    await simulator?.close();
    if (everything) await killProcess(everything);
  });

  it('offers the MCP tools as text in JSON mode, runs the call the reply writes, and logs each step under the trace_id', async () => {
    const echo = 'mcp-proxy__echo';
    simulator.script([
      { when: { toolResult: { name: echo } }, reply: { text: '{"answer": "Echoed as text."}' } },
      { reply: { toolCalls: [{ name: echo, arguments: { message: 'plain' } }] } },
    ]);
    const res = await parley.call('POST', '/internal/llm/generate', {
      mode: 'chat',
      messages: [{ role: 'user', content: 'echo plain' }],
      trace_id: 'trace-text-0001',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      answer: 'Echoed as text.',
      tools_called: [{ name: echo, arguments: { message: 'plain' }, result_summary: 'Echo: plain' }],
      meta: { model_name: 'sim-text-tools', tool_steps: 1, trace_id: 'trace-text-0001' },
    });
    const [first, second] = simulator.requests.map((r) => r.body as any);
    expect(first.tools).toBeUndefined();
    expect(first.response_format).toEqual({ type: 'json_object' });
    expect(
      first.messages.some((m: any) => m.role === 'system' && m.content.includes('You may use the following tools:')),
    ).toBe(true);
    expect(JSON.parse(second.messages.at(-1).content)).toEqual({ tool_result: 'Echo: plain', tool_name: echo });

    const steps = logs.filter((l) => l.conversation_id === res.body.meta.conversation_id && 'tool_step' in l);
    expect(steps).toEqual([
      expect.objectContaining({ model_name: 'sim-text-tools', tool_step: 0, trace_id: 'trace-text-0001' }),
      expect.objectContaining({ model_name: 'sim-text-tools', tool_step: 1, trace_id: 'trace-text-0001' }),
    ]);
  });
});

describe('the catalog kept from the environment', () => {
  /** Processes of one deployment share the key their catalog secrets are sealed with. */
  const KEY = randomBytes(32).toString('hex');

  it('is written once by processes starting together, and follows the variables at the next start', async () => {
    const simulator = await startSimulator();
    const db = await createTestDatabase('genenv');
    try {
      const env = {
        PARLEY_ENCRYPTION_KEY: KEY,
        LLM_RUNTIME_URL: simulator.url,
        DEFAULT_MODEL_NAME: 'first-model',
        MCP_PROXY_URL: 'http://127.0.0.1:9/mcp',
      };
      // Two processes on one clean database, booting at once: the catalog lock serialises them.
      const [a, b] = await Promise.all([
        startFromEnvironment('genenv', env, db),
        startFromEnvironment('genenv', env, db),
      ]);
      expect((await a.call('GET', '/api/v1/catalog/models/ENV-DEFAULT')).body.llmModelName).toBe('first-model');
      expect((await b.call('GET', '/api/v1/actions/GENERATE')).status).toBe(200);
      // Nothing left to change: the same variables write nothing.
      const again = await a.app
        .get(CatalogService)
        .apply((await import('@parley/catalog')).environmentBundle(a.config)!, { dryRun: true });
      const changed = Object.values(again.changes).flatMap((c: any) => [...(c.created ?? []), ...(c.updated ?? [])]);
      expect(changed).toEqual([]);
      await Promise.all([a.app.close(), b.app.close()]);

      const c = await startFromEnvironment(
        'genenv',
        { PARLEY_ENCRYPTION_KEY: KEY, LLM_RUNTIME_URL: simulator.url, DEFAULT_MODEL_NAME: 'second-model' },
        db,
      );
      try {
        expect((await c.call('GET', '/api/v1/catalog/models/ENV-DEFAULT')).body.llmModelName).toBe('second-model');
        simulator.script([{ reply: { text: 'From the second model.' } }]);
        const res = await c.call('POST', '/internal/llm/generate', {
          mode: 'chat',
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(res.body).toMatchObject({ answer: 'From the second model.', meta: { model_name: 'second-model' } });
        // MCP_PROXY_URL unset: the action offers no MCP tools any more.
        expect((simulator.requests[0].body as any).tools).toBeUndefined();

        // An action that names no model runs on DEFAULT_MODEL_NAME's.
        const applied = await c.call('POST', '/api/v1/catalog/apply', {
          actions: [{ code: 'NOMODEL', description: 'Names no model', llmMemoryStrategy: 'GENR' }],
        });
        expect(applied.status).toBe(200);
        const started = await c.call('POST', '/api/v1/conversations', { agentCode: 'GENERATE', actionCode: 'NOMODEL' });
        expect(started.status).toBe(201);
        simulator.script([{ reply: { text: 'Default model here.' } }]);
        const sent = await c.call('POST', `/api/v1/conversations/${started.body.conversationId}/messages`, {
          content: 'which model?',
        });
        expect(sent.body).toMatchObject({ status: 'CO', reply: 'Default model here.' });
        expect((simulator.requests.at(-1)!.body as any).model).toBe('second-model');
      } finally {
        await c.app.close();
      }
    } finally {
      await db.drop();
      await simulator.close();
    }
  }, 60_000);
});

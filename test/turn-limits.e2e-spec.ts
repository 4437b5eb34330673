import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { TurnSlots } from '@parley/auth';
import { REDIS, type Redis } from '@parley/platform';
import { createServer, type Server } from 'node:http';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

describe('failures, retries and limits of a turn', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  /** A tool endpoint that answers after five seconds. */
  let slowTool: Server;
  beforeAll(async () => {
    slowTool = createServer((_req, res) => {
      const late = setTimeout(() => res.end('{"late":true}'), 5_000);
      res.on('close', () => clearTimeout(late));
    });
    await new Promise<void>((r) => slowTool.listen(0, '127.0.0.1', r));
    const toolHost = `127.0.0.1:${(slowTool.address() as { port: number }).port}`;
    parley = await startParley(
      'turn_limits',
      {
        LLM_CALL_TIMEOUT_MS: '800',
        LLM_BREAKER_COOLDOWN_MS: '10',
        LLM_BREAKER_FAILURES: '100',
        TOOL_HTTP_ALLOWED_HOSTS: toolHost,
      },
      (url) => {
        const bundle = testCatalog(url, { retryCount: 3, maxToolRounds: 2 }) as any;
        bundle.tools.push({
          code: 'SLOW_HTTP',
          description: 'A tool that takes its time.',
          idempotent: true,
          config: { kind: 'http', url: `http://${toolHost}/slow` },
        });
        bundle.configurations.push(
          { code: 'TINY', description: 'Tiny budgets', tokenSizeMax: 64, llmRetryCount: 1, maxTotalTokens: 50 },
          { code: 'PRMT', description: 'Prompt budget', tokenSizeMax: 64, maxPromptTokens: 5 },
          { code: 'CMPL', description: 'Completion budget', tokenSizeMax: 64, maxCompletionTokens: 30 },
          { code: 'FAST', description: 'Short turn', tokenSizeMax: 64, llmRetryCount: 3, turnTimeoutMs: 1000 },
          { code: 'LONG', description: 'Long turn', tokenSizeMax: 64, turnTimeoutMs: 900_000 },
        );
        const act = (code: string, configuration: string) => ({
          ...bundle.actions[1],
          code,
          llmConfiguration: configuration,
        });
        bundle.actions.push(
          act('TOKENS', 'TINY'),
          act('PROMPT', 'PRMT'),
          act('SLOW', 'FAST'),
          act('REPLIES', 'CMPL'),
          act('LONGTURN', 'LONG'),
          { ...act('SLOWTOOL', 'FAST'), tools: ['SLOW_HTTP'] },
        );
        return bundle;
      },
    );
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(async () => {
    await parley.close();
    slowTool.closeAllConnections();
    await new Promise((r) => slowTool.close(r));
  });
  beforeEach(() => parley.simulator.reset());

  const send = async (actionCode: string, content = 'hello') => {
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
    return { id, res };
  };
  const eventsOf = async (id: string) => store.readStream(`conversation-${id}`);

  it('retries a 429 after its Retry-After and then answers', async () => {
    parley.simulator.script([
      { times: 1, reply: { fail: { status: 429, retryAfterMs: 200 } } },
      { reply: { text: 'Back again.' } },
    ]);
    const { id, res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Back again.' });
    const [first, second] = parley.simulator.requests.map((r) => r.receivedAt);
    expect(second - first).toBeGreaterThanOrEqual(200);
    const types = (await eventsOf(id)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ModelCallFailed', 'ModelCallRetryScheduled']));
    const failed = (await eventsOf(id)).find((e) => e.type === 'ModelCallFailed')!.data as any;
    expect(failed).toMatchObject({ kind: 'rate_limited', status: 429, retryable: true, attempt: 1 });
  });

  it('fails with LLM_RUNTIME_ERROR when every attempt gets a 429, each one after its Retry-After', async () => {
    parley.simulator.script([{ reply: { fail: { status: 429, retryAfterMs: 100 } } }]);
    const { id, res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'FA', reply: null, error: { code: 'LLM_RUNTIME_ERROR' } });
    const at = parley.simulator.requests.map((r) => r.receivedAt);
    expect(at).toHaveLength(3);
    expect(Math.min(at[1] - at[0], at[2] - at[1])).toBeGreaterThanOrEqual(100);
    const failures = (await eventsOf(id)).filter((e) => e.type === 'ModelCallFailed').map((e) => e.data as any);
    expect(failures.map((f) => [f.kind, f.attempt])).toEqual([
      ['rate_limited', 1],
      ['rate_limited', 2],
      ['rate_limited', 3],
    ]);
  });

  it('fails with LLM_RUNTIME_ERROR when every attempt’s stream is cut, recording no partial reply', async () => {
    parley.simulator.script([{ reply: { text: 'Never gets to the end of this sentence at all', cutAfterChunks: 2 } }]);
    const { id, res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'FA', reply: null, error: { code: 'LLM_RUNTIME_ERROR' } });
    expect(parley.simulator.requests).toHaveLength(3);
    const events = await eventsOf(id);
    expect(events.filter((e) => e.type === 'MessageRecorded').map((e) => (e.data as any).role)).toEqual(['US']);
    expect(events.filter((e) => e.type === 'ModelCallFailed')).toHaveLength(3);
  });

  it('fails with LLM_RUNTIME_ERROR after the configured attempts of 503', async () => {
    parley.simulator.script([{ reply: { fail: { status: 503, message: 'overloaded' } } }]);
    const { id, res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'FA', reply: null, error: { code: 'LLM_RUNTIME_ERROR' } });
    expect(parley.simulator.requests).toHaveLength(3);
    const attempts = (await eventsOf(id))
      .filter((e) => e.type === 'ModelCallStarted')
      .map((e) => (e.data as any).attempt);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('times out a hanging model call, retries, and fails the turn', async () => {
    parley.simulator.script([{ reply: { hang: true } }]);
    const { res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_RUNTIME_ERROR' } });
    expect(res.body.error.message).toMatch(/longer than 800 ms/);
  });

  it('retries a stream cut mid-way and keeps only the complete reply', async () => {
    parley.simulator.script([
      { times: 1, reply: { text: 'This reply will be cut somewhere in the middle of it', cutAfterChunks: 3 } },
      { reply: { text: 'Complete reply.' } },
    ]);
    const { id, res } = await send('CHAT');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Complete reply.' });
    const messages = (await eventsOf(id))
      .filter((e) => e.type === 'MessageRecorded')
      .map((e) => (e.data as any).content);
    expect(messages).toEqual(['hello', 'Complete reply.']);
  });

  it('stops a model that keeps asking for tools past the tool-round limit', async () => {
    parley.simulator.script([{ reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'X-1' } }] } }]);
    const { res } = await send('ANSWER', 'loop forever');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/more than 2 rounds/);
    expect(parley.simulator.requests).toHaveLength(3);
  });

  it('ends the turn after two tool failures in a row with TOOL_ERRORS', async () => {
    parley.simulator.script([{ reply: { toolCalls: [{ name: 'NO_SUCH_TOOL', arguments: {} }] } }]);
    const { res } = await send('ANSWER', 'break it');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'TOOL_ERRORS' } });
  });

  it('enforces the total token budget of a turn', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'Y-1' } }],
          tokens: { prompt: 40, completion: 20 },
        },
      },
    ]);
    const { res } = await send('TOKENS', 'spend it');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/total token budget \(60 of 50\)/);
  });

  it('holds each call within what the completion token budget has left, and stops the turn once it is spent', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'C-1' } }],
          tokens: { prompt: 5, completion: 20 },
        },
      },
      {
        reply: {
          toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'C-2' } }],
          tokens: { prompt: 5, completion: 15 },
        },
      },
    ]);
    const { res } = await send('REPLIES', 'spend the replies');
    // 64 per call by the configuration, within the 30 of the turn: 30, then the 10 left.
    expect(parley.simulator.requests.map((r) => r.body?.max_tokens)).toEqual([30, 10]);
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/completion token budget \(35 of 30\)/);
  });

  it('refuses a prompt over the prompt token budget before calling the model', async () => {
    const { res } = await send('PROMPT', 'a prompt far longer than five tokens, surely');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/over the budget of 5/);
    expect(parley.simulator.requests).toHaveLength(0);
  });

  it('fails a turn that runs past its time budget', async () => {
    parley.simulator.script([{ reply: { hang: true } }]);
    const started = Date.now();
    const { res } = await send('SLOW', 'take your time');
    expect(Date.now() - started).toBeLessThan(1600);
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/time budget/);
  });

  it('caps the size of a tool output and marks the cut', async () => {
    // The per-action cap comes from the configuration; the service default applies here.
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'O'.repeat(3000) } }] },
      },
      { reply: { text: 'ok' } },
    ]);
    const { id } = await send('ANSWER', 'big');
    const completed = (await eventsOf(id)).find((e) => e.type === 'ToolCallCompleted')!.data as any;
    expect(completed.truncated).toBe(false);
    expect(Buffer.byteLength(completed.output)).toBeLessThanOrEqual(parley.config.turn.maxToolOutputBytes);
  });

  it('runs at most MAX_TOOL_CALLS_PER_REPLY calls of a reply asking for 200, refusing the rest as data', async () => {
    const calls = Array.from({ length: 200 }, (_, i) => ({ name: 'ORDER_STATUS', arguments: { orderId: `M-${i}` } }));
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: calls } },
      { reply: { text: 'Done.' } },
    ]);
    const started = Date.now();
    const { id, res } = await send('ANSWER', 'check them all');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Done.' });
    expect(Date.now() - started).toBeLessThan(parley.config.turn.timeoutMs);
    const events = await eventsOf(id);
    const cap = parley.config.turn.maxToolCallsPerReply;
    expect(cap).toBe(32);
    expect(events.filter((e) => e.type === 'ToolCallCompleted')).toHaveLength(cap);
    const refused = events.filter((e) => e.type === 'ToolCallFailed').map((e) => e.data as any);
    expect(refused).toHaveLength(200 - cap);
    expect(refused.every((f) => f.refused === true && f.code === 'NOT_ALLOWED')).toBe(true);
    expect(refused[0].message).toMatch(/asked for 200 tool calls and at most 32 run per reply/);
    // The model gets a result for every call it made, the refusals included.
    const second = parley.simulator.requests[1].body!.messages;
    expect(second.filter((m) => m.role === 'tool')).toHaveLength(200);
    expect(parley.simulator.requests).toHaveLength(2);
  });

  it('gives a slow tool near the deadline only the time left of the turn', async () => {
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'SLOW_HTTP', arguments: {} }] } },
      { reply: { text: 'never asked' } },
    ]);
    const started = Date.now();
    const { id, res } = await send('SLOWTOOL', 'wait for it');
    // The turn's budget is 1 s; the tool's own timeout (30 s) and its 5 s answer do not stretch it.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    const failed = (await eventsOf(id)).find((e) => e.type === 'ToolCallFailed')!.data as any;
    expect(failed.code).toBe('TIMEOUT');
    expect(Number(/within (\d+) ms/.exec(failed.message)![1])).toBeLessThan(1_000);
    expect(parley.simulator.requests).toHaveLength(1);
  });

  it('keeps the calls of one turn apart when the model repeats an id, and sends the model its own ids back', async () => {
    parley.simulator.script([
      {
        when: { callCount: 1 },
        reply: { toolCalls: [{ id: 'call_1', name: 'ORDER_STATUS', arguments: { orderId: 'A-1' } }] },
      },
      {
        when: { callCount: 2 },
        reply: { toolCalls: [{ id: 'call_1', name: 'ORDER_STATUS', arguments: { orderId: 'B-2' } }] },
      },
      { reply: { text: 'Both found.' } },
    ]);
    const { id, res } = await send('CANCEL', 'two orders');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Both found.' });
    const completed = (await eventsOf(id)).filter((e) => e.type === 'ToolCallCompleted').map((e) => e.data as any);
    expect(completed.map((c) => JSON.parse(c.output).orderId)).toEqual(['A-1', 'B-2']);
    expect(new Set(completed.map((c) => c.toolCallId)).size).toBe(2);
    const third = parley.simulator.requests[2].body!.messages;
    expect(third.filter((m) => m.role === 'assistant').map((m) => m.tool_calls?.map((t) => t.id))).toEqual([
      ['call_1'],
      ['call_1'],
    ]);
    expect(
      third.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, JSON.parse(String(m.content)).orderId]),
    ).toEqual([
      ['call_1', 'A-1'],
      ['call_1', 'B-2'],
    ]);
  });

  it("keeps a turn's slot for as long as its configuration gives the turn, past TURN_TIMEOUT_MS", async () => {
    parley.simulator.script([{ reply: { hang: true } }]);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'LONGTURN' }))
      .body.conversationId as string;
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'take long', wait: false });
    const redis = parley.app.get<Redis>(REDIS);
    const [key] = await redis.keys(`${parley.config.prefix}:turn-slots:*`);
    const expiresIn = async () => Number((await redis.zscore(key, id)) ?? Date.now()) - Date.now();
    // Taken for TURN_TIMEOUT_MS (300 s) and a minute; the running turn holds it for its 900 s.
    let longest = await expiresIn();
    const until = Date.now() + 2_000;
    while (longest < 900_000 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      longest = Math.max(longest, await expiresIn());
    }
    expect(longest).toBeGreaterThan(900_000);
    await parley.call('POST', `/api/v1/conversations/${id}/kill`, { reason: 'done' });
  });

  it('leaves the slot as its command took it when the turn has no longer a budget: no Redis call a turn to extend it', async () => {
    const holdFor = jest.spyOn(parley.app.get(TurnSlots), 'holdFor');
    try {
      parley.simulator.script([{ reply: { text: 'Quick.' } }]);
      const { res } = await send('CHAT');
      expect(res.body).toMatchObject({ status: 'CO', reply: 'Quick.' });
      expect(holdFor).not.toHaveBeenCalled();
      parley.simulator.script([{ reply: { text: 'Slow.' } }]);
      const long = await send('LONGTURN');
      expect(long.res.body).toMatchObject({ status: 'CO', reply: 'Slow.' });
      expect(holdFor).toHaveBeenCalledTimes(1);
    } finally {
      holdFor.mockRestore();
    }
  });
});

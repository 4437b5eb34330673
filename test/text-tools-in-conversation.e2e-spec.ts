import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { Writable } from 'node:stream';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * The test catalog plus a model without a tools API (no FC; JM, so JSON mode is asked for) and
 * a configuration with stop sequences, behind an action with an in-process tool and one that
 * needs approval.
 */
function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  return {
    ...base,
    models: [
      ...base.models,
      { ...base.models[0], code: 'SIM-TEXT', llmModelName: 'sim-text-tools', capabilities: ['SR', 'JM'] },
    ],
    configurations: [...base.configurations, { ...base.configurations[0], code: 'STOP', stop: ['\nUser:', '###'] }],
    actions: [
      ...base.actions,
      {
        code: 'TEXT',
        description: 'Tools as text',
        llmModel: 'SIM-TEXT',
        llmConfiguration: 'STOP',
        llmMemoryStrategy: 'FULL',
        tools: ['ORDER_STATUS', 'CANCEL_ORDER'],
        askUserQuestion: true,
      },
    ],
  };
}

/** Every JSON line the app logs. */
function logCapture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { destination, lines };
}

describe('tool calls in text, for a catalog model without the FC capability, in a conversation', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  const logs = logCapture();
  beforeAll(async () => {
    parley = await startParley('text_tools', {}, catalog, { destination: logs.destination, level: 'info' });
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'TEXT' })).body
      .conversationId as string;
  const send = (id: string, content: string, headers: Record<string, string> = {}) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content }, headers);
  const eventsOf = async (id: string) => store.readStream(`conversation-${id}`);
  const dataOf = async (id: string, type: string) =>
    (await eventsOf(id)).filter((e) => e.type === type).map((e) => e.data as any);
  const bodies = () => parley.simulator.requests.map((r) => r.body!);

  it('offers the tools as text, runs the call the reply writes, and answers from its result', async () => {
    parley.simulator.script([
      {
        when: { lastUserMessage: /order/, noToolResult: true },
        reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'A-1001' } }] },
      },
      {
        when: { toolResult: { name: 'ORDER_STATUS' } },
        reply: { text: '{"answer": "Your order A-1001 has shipped."}' },
      },
    ]);
    const id = await start();
    const res = await send(id, 'where is my order A-1001?', { 'x-trace-id': 'caller-trace-0001' });
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Your order A-1001 has shipped.', finishReason: 'ST' });

    // The same events as a tools-API model's turn.
    const types = (await eventsOf(id)).map((e) => e.type);
    const from = types.indexOf('ToolCallStarted');
    expect(types.slice(from - 2, from + 3)).toEqual([
      'ModelCallCompleted',
      'MessageRecorded',
      'ToolCallStarted',
      'ToolCallCompleted',
      'ModelCallStarted',
    ]);
    const [asked] = (await dataOf(id, 'MessageRecorded')).filter((m) => m.role === 'AS' && m.toolCalls);
    expect(asked.toolCalls).toEqual([
      expect.objectContaining({ name: 'ORDER_STATUS', arguments: '{"orderId":"A-1001"}' }),
    ]);
    const [completed] = await dataOf(id, 'ToolCallCompleted');
    expect(JSON.parse(completed.output)).toMatchObject({ orderId: 'A-1001', status: 'shipped' });
    // The call's JSON was never streamed as the answer; the final answer was, unwrapped.
    const chunks = await dataOf(id, 'ChunksReceived');
    expect(
      chunks
        .filter((c) => c.callNo === 1)
        .map((c) => c.text)
        .join(''),
    ).toBe('');
    expect(
      chunks
        .filter((c) => c.callNo === 2)
        .map((c) => c.text)
        .join(''),
    ).toBe('Your order A-1001 has shipped.');

    const [first, second] = bodies();
    for (const body of [first, second]) {
      expect(body.tools).toBeUndefined();
      expect(body.response_format).toEqual({ type: 'json_object' });
      expect(body.stop).toEqual(['\nUser:', '###']);
    }
    expect(first.messages[0].content).toContain(
      'You may use the following tools:\n- ORDER_STATUS: Looks up the delivery status of an order. Arguments (JSON Schema): {',
    );
    expect(first.messages[0].content).toContain(
      'Return tool calls in JSON format:\n{"tool_name": "...", "arguments": {...}}',
    );
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '{"tool_name":"ORDER_STATUS","arguments":{"orderId":"A-1001"}}' },
      { role: 'user', content: JSON.stringify({ tool_result: completed.output, tool_name: 'ORDER_STATUS' }) },
    ]);

    // One log line per model step, with the caller's trace id.
    const steps = logs.lines.filter((l) => l.conversation_id === id && 'tool_step' in l);
    expect(steps).toEqual([
      expect.objectContaining({
        context: 'ModelCall',
        model_name: 'sim-text-tools',
        tool_step: 0,
        call_no: 1,
        latency_ms: expect.any(Number),
        outcome: 'ok',
        finish_reason: 'TC',
        trace_id: 'caller-trace-0001',
      }),
      expect.objectContaining({
        model_name: 'sim-text-tools',
        tool_step: 1,
        outcome: 'ok',
        trace_id: 'caller-trace-0001',
      }),
    ]);
  });

  it.each([
    ['broken JSON', { name: 'ORDER_STATUS', arguments: '{"orderId": ' }, 'INVALID_ARGUMENTS', /not valid JSON/i],
    [
      'arguments that are not an object',
      { name: 'ORDER_STATUS', arguments: '["B-2"]' },
      'INVALID_ARGUMENTS',
      /one JSON object/,
    ],
    ['an unknown tool', { name: 'NO_SUCH_TOOL', arguments: {} }, 'NOT_ALLOWED', /NO_SUCH_TOOL/],
  ])('sends a call with %s back as a tool_error, and the model recovers', async (_, bad, code, message) => {
    parley.simulator.script([
      { when: { callCount: 1 }, reply: { toolCalls: [bad] } },
      { when: { callCount: 2 }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'B-2' } }] } },
      { reply: { text: '{"answer": "Found it."}' } },
    ]);
    const id = await start();
    const res = await send(id, 'order B-2');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Found it.' });
    expect(await dataOf(id, 'ToolCallFailed')).toEqual([expect.objectContaining({ code })]);
    expect(await dataOf(id, 'ToolCallCompleted')).toHaveLength(1);
    const fed = JSON.parse(bodies()[1].messages.at(-1)!.content as string);
    expect(Object.keys(fed)).toEqual(['tool_error', 'tool_name']);
    expect(fed.tool_error).toMatch(message);
  });

  it('asks for approval of a call written as text, then runs it', async () => {
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'C-3' } }] } },
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: '{"answer": "Cancelled."}' } },
    ]);
    const id = await start();
    const waiting = await send(id, 'cancel C-3');
    expect(waiting.body).toMatchObject({ status: 'WA', pendingApprovals: [{ name: 'CANCEL_ORDER' }] });
    const [{ toolCallId }] = waiting.body.pendingApprovals;
    const approved = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/${toolCallId}/approve`, {});
    expect(approved.body).toMatchObject({ status: 'CO', reply: 'Cancelled.' });
    expect(await dataOf(id, 'ToolCallCompleted')).toEqual([expect.objectContaining({ toolCallId })]);
  });

  it('asks the user the question a call written as text asks, and sends the answers back as its result', async () => {
    const questions = [{ key: 'priority', question: 'How urgent is it?', options: ['low', 'high'] }];
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'AskUserQuestion', arguments: { questions } }] } },
      { when: { toolResult: { name: 'AskUserQuestion' } }, reply: { text: '{"answer": "Filed as high."}' } },
    ]);
    const id = await start();
    const asked = await send(id, 'open a ticket');
    expect(asked.body).toMatchObject({ status: 'WA', reply: null, pendingQuestion: { questions } });
    const answered = await parley.call('POST', `/api/v1/conversations/${id}/answers`, {
      answers: { priority: 'high' },
    });
    expect(answered.body).toMatchObject({ status: 'CO', reply: 'Filed as high.' });
    expect(JSON.parse(bodies().at(-1)!.messages.at(-1)!.content as string)).toEqual({
      tool_result: JSON.stringify({ answers: { priority: 'high' } }),
      tool_name: 'AskUserQuestion',
    });
  });

  it('logs a step whose every attempt failed, under the trace id the command was answered with', async () => {
    parley.simulator.script([{ reply: { fail: { status: 400, message: 'bad request' } } }]);
    const id = await start();
    const res = await send(id, 'hello');
    expect(res.body).toMatchObject({ status: 'FA' });
    const steps = logs.lines.filter((l) => l.conversation_id === id && 'tool_step' in l);
    expect(steps).toEqual([
      expect.objectContaining({
        model_name: 'sim-text-tools',
        tool_step: 0,
        outcome: 'error',
        attempts: 1,
        latency_ms: expect.any(Number),
        trace_id: res.headers.get('x-trace-id'),
      }),
    ]);
  });

  it('refuses more than four stop sequences at catalog apply, naming the field, and changes nothing', async () => {
    const res = await parley.call('POST', '/api/v1/catalog/apply', {
      configurations: [{ code: 'STOP', description: 'x', tokenSizeMax: 10, stop: ['a', 'b', 'c', 'd', 'e'] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toEqual(['configurations[0].stop']);
    const kept = await parley.call('GET', '/api/v1/catalog/configurations/STOP');
    expect(kept.body.stop).toEqual(['\nUser:', '###']);
  });
});

import type { RecordedEvent } from '@parley/event-store';
import { EVENT_STORE, parsePosition, type EventStore } from '@parley/event-store';
import { startParley, type ParleyUnderTest } from './support/parley-app';

describe('a conversation end to end over HTTP (simulator as the model)', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('conv_e2e');
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode = 'CHAT') => {
    const res = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode });
    expect(res.status).toBe(201);
    return res.body.conversationId as string;
  };
  const events = async (id: string): Promise<RecordedEvent[]> => store.readStream(`conversation-${id}`);

  it('streams a plain reply and records every step of the turn', async () => {
    parley.simulator.script([
      {
        when: { lastUserMessage: /hello/ },
        reply: { text: 'Hi there, how can I help you today?', tokens: { prompt: 20, completion: 9 } },
      },
    ]);
    const id = await start();
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      conversationId: id,
      status: 'CO',
      reply: 'Hi there, how can I help you today?',
      finishReason: 'ST',
      usage: { inputTokens: 20, outputTokens: 9, estimatedCost: 0.000038 },
    });
    expect(res.body.position).toMatch(/^pg:/);

    const types = (await events(id)).map((e) => e.type);
    expect(types[0]).toBe('ConversationStarted');
    expect(types.slice(1, 4)).toEqual(['MessageRecorded', 'TurnStarted', 'ModelCallStarted']);
    expect(types.slice(-3)).toEqual(['ModelCallCompleted', 'MessageRecorded', 'ConversationCompleted']);
    const chunkEvents = (await events(id)).filter((e) => e.type === 'ChunksReceived');
    expect(chunkEvents.length).toBeGreaterThanOrEqual(1);
    expect(chunkEvents.length).toBeLessThan(9);
    expect(chunkEvents.map((e) => (e.data as { text: string }).text).join('')).toBe(
      'Hi there, how can I help you today?',
    );

    const request = parley.simulator.requests.at(-1)!;
    expect(request.headers.authorization).toBe('Bearer sk-test-secret-4242');
    expect(request.body?.messages[0]).toEqual({
      role: 'system',
      content: expect.stringContaining("You are ACME's support assistant."),
    });
    expect(request.body?.messages.at(-1)).toEqual({ role: 'user', content: 'hello' });
  });

  it('takes minPosition on every query: the read models wait for it, the catalog and the raw stream read at once', async () => {
    parley.simulator.script([{ when: { lastUserMessage: /ping/ }, reply: { text: 'pong' } }]);
    const id = await start();
    const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'ping' });
    const at = `minPosition=${sent.body.position}`;
    const found = await parley.call('GET', `/api/v1/conversations/${id}?${at}`);
    expect(found.body).toMatchObject({ llmProcessStatus: 'CO' });
    for (const path of [
      `/api/v1/actions?${at}`,
      `/api/v1/actions/CHAT?${at}`,
      `/api/v1/agents/HELPDESK?${at}`,
      `/api/v1/conversations/${id}/events?${at}&limit=2`,
      `/api/v1/conversations/${id}/state?${at}`,
      `/api/v1/events?${at}&limit=1`,
    ])
      expect([path, (await parley.call('GET', path)).status]).toEqual([path, 200]);
    const malformed = await parley.call('GET', '/api/v1/actions/CHAT?minPosition=yesterday');
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });
});

describe('tools, questions and approvals in a turn', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('conv_tools');
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string) =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const typesOf = async (id: string) => (await store.readStream(`conversation-${id}`)).map((e) => e.type);
  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);

  it('runs a tool the model asks for and feeds the result back before answering', async () => {
    parley.simulator.script([
      {
        when: { lastUserMessage: /order/, noToolResult: true },
        reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'A-1001' } }] },
      },
      { when: { toolResult: { name: 'ORDER_STATUS' } }, reply: { text: 'Your order A-1001 has shipped.' } },
    ]);
    const id = await start('ANSWER');
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, {
      content: 'where is my order A-1001?',
    });
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Your order A-1001 has shipped.', finishReason: 'ST' });
    const types = await typesOf(id);
    const from = types.indexOf('ToolCallStarted');
    expect(types.slice(from - 2, from + 3)).toEqual([
      'ModelCallCompleted',
      'MessageRecorded',
      'ToolCallStarted',
      'ToolCallCompleted',
      'ModelCallStarted',
    ]);
    // Two appends for the whole turn: the command's, and one with the reply that asked for the
    // (idempotent) tool, the tool's call and result, and the answer (a position's xid is its append).
    const turn = (await store.readStream(`conversation-${id}`)).slice(1);
    expect(new Set(turn.map((e) => (parsePosition(e.position) as { tx: bigint }).tx)).size).toBe(2);
    const [completed] = await dataOf(id, 'ToolCallCompleted');
    expect(JSON.parse(completed.output)).toMatchObject({ orderId: 'A-1001' });
    expect(completed.durationMs).toEqual(expect.any(Number));
    const second = parley.simulator.requests.at(-1)!.body!;
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: completed.output });
  });

  it('refuses a tool the action does not allow and tells the model', async () => {
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: '1' } }] } },
      { when: { toolResult: {} }, reply: { text: 'I cannot do that.' } },
    ]);
    const id = await start('ANSWER');
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'cancel it' });
    expect(res.body).toMatchObject({ status: 'CO', reply: 'I cannot do that.' });
    const [failed] = await dataOf(id, 'ToolCallFailed');
    expect(failed).toMatchObject({ name: 'CANCEL_ORDER', code: 'NOT_ALLOWED' });
    expect(await typesOf(id)).not.toContain('ToolCallStarted');
  });

  it('turns an invalid tool call into an error the model can correct', async () => {
    parley.simulator.script([
      { when: { callCount: 1 }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: '{"orderId": ' }] } },
      { when: { callCount: 2 }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'B-2' } }] } },
      { reply: { text: 'Found it.' } },
    ]);
    const id = await start('ANSWER');
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'order B-2' });
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Found it.' });
    const failed = await dataOf(id, 'ToolCallFailed');
    expect(failed).toEqual([expect.objectContaining({ code: 'INVALID_ARGUMENTS' })]);
    expect(await dataOf(id, 'ToolCallCompleted')).toHaveLength(1);
  });

  it('asks the user a question, waits without holding anything, and continues with the answers', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            {
              name: 'AskUserQuestion',
              arguments: { questions: [{ key: 'priority', question: 'How urgent is it?', options: ['low', 'high'] }] },
            },
          ],
        },
      },
      { when: { toolResult: { name: 'AskUserQuestion' } }, reply: { text: 'Filed as high priority.' } },
    ]);
    const id = await start('ANSWER');
    const asked = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'open a ticket' });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({
      status: 'WA',
      reply: null,
      pendingQuestion: { questions: [{ key: 'priority', question: 'How urgent is it?', options: ['low', 'high'] }] },
    });
    const busy = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello?' });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('CONVERSATION_WAITING');

    const answered = await parley.call('POST', `/api/v1/conversations/${id}/answers`, {
      answers: { priority: 'high' },
    });
    expect(answered.body).toMatchObject({ status: 'CO', reply: 'Filed as high priority.' });
    const toolMessage = parley.simulator.requests.at(-1)!.body!.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', content: JSON.stringify({ answers: { priority: 'high' } }) });
    const types = await typesOf(id);
    expect(types).toEqual(expect.arrayContaining(['QuestionAsked', 'AnswersSubmitted', 'TurnResumed']));

    const again = await parley.call('POST', `/api/v1/conversations/${id}/answers`, { answers: { priority: 'low' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONVERSATION_NOT_WAITING');
  });

  it('waits for approval of a tool that needs it, then runs it', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'C-3' }, id: 'call_cancel' }] },
      },
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Done.' } },
    ]);
    const id = await start('CANCEL');
    const waiting = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'cancel C-3' });
    expect(waiting.body).toMatchObject({
      status: 'WA',
      pendingApprovals: [{ toolCallId: 'call_cancel', name: 'CANCEL_ORDER' }],
    });
    expect(await typesOf(id)).not.toContain('ToolCallStarted');

    const unknown = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_nope/approve`, {});
    expect(unknown.status).toBe(404);
    const approved = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_cancel/approve`, {});
    expect(approved.body).toMatchObject({ status: 'CO', reply: 'Done.' });
    expect(await dataOf(id, 'ToolCallCompleted')).toEqual([expect.objectContaining({ toolCallId: 'call_cancel' })]);
  });

  it('tells the model when the user rejects a tool call', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'D-4' }, id: 'call_d4' }] },
      },
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Understood, I will not cancel it.' } },
    ]);
    const id = await start('CANCEL');
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'cancel D-4' });
    const rejected = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_d4/reject`, {
      reason: 'changed my mind',
    });
    expect(rejected.body).toMatchObject({ status: 'CO', reply: 'Understood, I will not cancel it.' });
    expect(await typesOf(id)).not.toContain('ToolCallStarted');
    const toolMessage = parley.simulator.requests.at(-1)!.body!.messages.at(-1) as { content: string };
    expect(toolMessage.content).toContain('rejected this tool call: changed my mind');
  });
});

import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { connect, headers, type NatsConnection } from 'nats';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * Commands and queries over NATS exactly as another service sends them: a plain `nats`
 * client, the credential in the `authorization` header, the idempotency key as `commandId`.
 */
describe('conversation commands over NATS through the real ConversationModule', () => {
  let parley: ParleyUnderTest;
  let nc: NatsConnection;
  let store: EventStore;

  beforeAll(async () => {
    parley = await startParley('nats_cmd_e2e');
    nc = await connect({ servers: parley.config.nats.url! });
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(async () => {
    await nc?.close();
    await parley?.close();
  });

  const request = async (subject: string, payload: unknown): Promise<any> => {
    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    const msg = await nc.request(`${parley.config.prefix}.${subject}`, JSON.stringify(payload), {
      headers: h,
      timeout: 15_000,
    });
    return JSON.parse(msg.string());
  };
  const eventCount = async (id: string) => (await store.readStream(`conversation-${id}`)).length;

  it('starts a conversation and runs a turn, replays a repeated commandId without appending, and reads the projection', async () => {
    parley.simulator.script([
      { when: { lastUserMessage: /order A-1001/ }, reply: { text: 'Order A-1001 left the warehouse today.' } },
    ]);
    const start = { agentCode: 'HELPDESK', actionCode: 'CHAT', metadata: { channel: 'nats' }, commandId: 'start-1' };
    const started = await request('cmd.startConversation', start);
    expect(started.error).toBeUndefined();
    const id = started.result.conversationId as string;
    expect(started.result).toMatchObject({ status: 'NS', position: expect.stringMatching(/^pg:/) });

    const send = { conversationId: id, content: 'Where is order A-1001?', commandId: 'send-1' };
    const sent = await request('cmd.sendMessage', send);
    expect(sent.result).toMatchObject({
      conversationId: id,
      status: 'CO',
      reply: 'Order A-1001 left the warehouse today.',
      finishReason: 'ST',
    });
    const eventsAfterTurn = await eventCount(id);
    const modelCalls = parley.simulator.requests.length;

    const startedAgain = await request('cmd.startConversation', start);
    // The first result, as the first run answered it: not the conversation as it is now.
    expect(startedAgain.result).toEqual(started.result);
    const sentAgain = await request('cmd.sendMessage', send);
    expect(sentAgain.result).toMatchObject({ conversationId: id, reply: 'Order A-1001 left the warehouse today.' });
    expect(sentAgain.result.position).toBe(sent.result.position);
    expect(await eventCount(id)).toBe(eventsAfterTurn);
    expect(parley.simulator.requests.length).toBe(modelCalls);

    const reused = await request('cmd.sendMessage', { ...send, content: 'Something else' });
    expect(reused.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await eventCount(id)).toBe(eventsAfterTurn);

    const found = await request('qry.findConversation', { conversationId: id, minPosition: sent.result.position });
    expect(found.result).toMatchObject({
      conversationUuid: id,
      llmAgent: 'HELPDESK',
      llmAction: 'CHAT',
      llmProcessStatus: 'CO',
      metadata: { channel: 'nats' },
      position: sent.result.position,
    });
    const messages = await request('qry.getConversationMessages', {
      conversationId: id,
      minPosition: sent.result.position,
    });
    const rows = messages.result as { llmMessageRole: string; llmMessageContent: string }[];
    expect(rows.map((m) => [m.llmMessageRole, m.llmMessageContent])).toEqual([
      ['US', 'Where is order A-1001?'],
      ['AS', 'Order A-1001 left the warehouse today.'],
    ]);
  }, 40_000);

  it('answers a turn that fails as data at both doors: HTTP 200 and a NATS result, status FA with the error', async () => {
    parley.simulator.script([{ reply: { fail: { status: 500, message: 'the model is down' } } }]);
    const failure = { status: 'FA', reply: null, error: { code: 'LLM_RUNTIME_ERROR', message: expect.any(String) } };

    const overHttp = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }))
      .body.conversationId as string;
    const http = await parley.call('POST', `/api/v1/conversations/${overHttp}/messages`, { content: 'hello?' });
    expect(http.status).toBe(200);
    expect(http.body).toMatchObject({ conversationId: overHttp, ...failure });
    expect(http.body.usage).toEqual({ inputTokens: 0, outputTokens: 0, estimatedCost: 0 });

    const started = await request('cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    const overNats = started.result.conversationId as string;
    const sent = await request('cmd.sendMessage', { conversationId: overNats, content: 'hello?' });
    expect(sent.error).toBeUndefined();
    expect(sent.result).toMatchObject({ conversationId: overNats, ...failure });
    expect(Object.keys(sent.result).sort()).toEqual(Object.keys(http.body).sort());
  });

  it('adds, changes and removes a tool repository over NATS, and a bad one changes nothing', async () => {
    const id = (await request('cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).result
      .conversationId as string;
    const added = await request('cmd.addToolRepository', {
      conversationId: id,
      repositoryId: 'orders',
      options: { triggerOnce: true },
      tools: ['ORDER_STATUS'],
    });
    expect(added.error).toBeUndefined();
    const changed = await request('cmd.changeToolRepository', {
      conversationId: id,
      repositoryId: 'orders',
      tools: ['ORDER_STATUS', 'CANCEL_ORDER'],
    });
    expect(changed.error).toBeUndefined();
    const before = await eventCount(id);
    const unknownTool = await request('cmd.addToolRepository', {
      conversationId: id,
      repositoryId: 'more',
      tools: ['NO_SUCH'],
    });
    expect(unknownTool.error.code).toBe('NOT_FOUND');
    const unknownRepository = await request('cmd.removeToolRepository', { conversationId: id, repositoryId: 'nope' });
    expect(unknownRepository.error.code).toBe('NOT_FOUND');
    expect(await eventCount(id)).toBe(before);
    const removed = await request('cmd.removeToolRepository', { conversationId: id, repositoryId: 'orders' });
    expect(removed.error).toBeUndefined();

    const events = await store.readStream(`conversation-${id}`);
    expect(events.slice(1).map((e) => e.type)).toEqual([
      'ToolRepositoryAdded',
      'ToolRepositoryChanged',
      'ToolRepositoryRemoved',
    ]);
    expect(events[2].data).toMatchObject({
      repositoryId: 'orders',
      tools: [{ name: 'ORDER_STATUS' }, { name: 'CANCEL_ORDER' }],
    });
  });
});

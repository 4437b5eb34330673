import type { RecordedEvent } from '@parley/event-store';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
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
});

import { fold, type ConversationEnvelope, type ExistingConversation } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import type { RecordedRequest } from '@parley/testing';
import { buildMessages, SUMMARY_LABEL } from '@parley/turn';
import { connect, headers, type NatsConnection } from 'nats';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** The test catalog with a SUMMARY strategy (threshold 50 tokens, two messages kept) and an action on it. */
function memoryCatalog(simUrl: string) {
  const catalog = testCatalog(simUrl);
  return {
    ...catalog,
    memoryStrategyTypes: [...catalog.memoryStrategyTypes, { code: 'SUMM', description: 'Summary' }],
    memoryStrategies: [
      ...catalog.memoryStrategies,
      {
        code: 'SUMM',
        description: 'Summarise past 50 tokens',
        llmMemoryStrategyType: 'SUMM',
        llmMemorySummaryThreshold: 50,
        llmMemoryKeepRecent: 2,
      },
    ],
    actions: [
      ...catalog.actions,
      {
        code: 'MEMO',
        description: 'Chat with summarised memory',
        llmModel: 'SIM-CHAT',
        llmConfiguration: 'TEST',
        llmMemoryStrategy: 'SUMM',
        llmActionPrompt: 'Answer briefly.',
      },
    ],
  };
}

const isSummaryRequest = (r: { messages: { role: string; content?: unknown }[] }) =>
  String(r.messages[0]?.content ?? '').startsWith('You summarise a conversation');
const roleAndText = (r: RecordedRequest) =>
  r.body!.messages.map((m) => ({ role: m.role, content: m.content as string }));

describe('conversation memory: SUMMARY and clearing it, over HTTP and NATS', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let nc: NatsConnection;
  beforeAll(async () => {
    parley = await startParley('memory', {}, memoryCatalog);
    store = parley.app.get(EVENT_STORE);
    nc = await connect({ servers: parley.config.nats.url! });
  });
  afterAll(async () => {
    await nc?.close();
    await parley?.close();
  });
  beforeEach(() => {
    parley.simulator.reset();
    parley.simulator.setLatency(0);
  });

  const start = async (actionCode = 'CHAT') =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const clear = (id: string, body: Record<string, unknown> = {}) =>
    parley.call('POST', `/api/v1/conversations/${id}/memory/clear`, body);
  const events = (id: string) => store.readStream(`conversation-${id}`);
  const nats = async (method: string, payload: unknown): Promise<any> => {
    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    const msg = await nc.request(`${parley.config.prefix}.cmd.${method}`, JSON.stringify(payload), {
      headers: h,
      timeout: 15_000,
    });
    return JSON.parse(msg.string());
  };

  it('summarises the older messages once past the threshold, then prompts with the summary and the recent messages', async () => {
    parley.simulator.script([
      {
        when: { predicate: (r) => isSummaryRequest(r) && JSON.stringify(r.messages).includes('Previous summary:') },
        reply: { text: 'Second summary.' },
      },
      { when: { predicate: isSummaryRequest }, reply: { text: 'First summary.' } },
      { reply: { text: 'ok' } },
    ]);
    const id = await start('MEMO');
    const [m1, m2, m3] = ['alpha', 'bravo', 'charlie'].map((w) => `${w} `.repeat(40).trim());

    expect((await send(id, m1)).body).toMatchObject({ status: 'CO', reply: 'ok' });
    expect(parley.simulator.requests.filter((r) => isSummaryRequest(r.body!))).toHaveLength(0);

    expect((await send(id, m2)).body).toMatchObject({ status: 'CO', reply: 'ok' });
    const afterTwo = parley.simulator.requests.slice(1);
    expect(afterTwo.map((r) => isSummaryRequest(r.body!))).toEqual([true, false]);
    expect(afterTwo[0].body!.messages[1].content).toContain(`User: ${m1}`);
    expect(afterTwo[0].body!.messages[1].content).not.toContain('bravo');
    expect(roleAndText(afterTwo[1]).slice(1)).toEqual([
      { role: 'system', content: `${SUMMARY_LABEL}\nFirst summary.` },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: m2 },
    ]);

    const third = await send(id, m3);
    expect(third.body).toMatchObject({ status: 'CO', reply: 'ok' });
    const afterThreePosition = third.body.position as string;
    const afterThree = parley.simulator.requests.slice(3);
    expect(afterThree.map((r) => isSummaryRequest(r.body!))).toEqual([true, false]);
    expect(afterThree[0].body!.messages[1].content).toContain('Previous summary:\nFirst summary.');
    expect(afterThree[0].body!.messages[1].content).toContain(`User: ${m2}`);
    expect(roleAndText(afterThree[1]).slice(1)).toEqual([
      { role: 'system', content: `${SUMMARY_LABEL}\nSecond summary.` },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: m3 },
    ]);

    const stream = await events(id);
    const summaries = stream.filter((e) => e.type === 'MemorySummarized').map((e) => e.data as any);
    expect(summaries).toMatchObject([
      { turnNo: 2, fromSequence: 1, throughSequence: 1, summary: 'First summary.', model: 'sim-chat' },
      { turnNo: 3, fromSequence: 1, throughSequence: 3, summary: 'Second summary.', model: 'sim-chat' },
    ]);
    expect(summaries[0].inputTokens).toBeGreaterThan(0);
    expect(summaries[0].cost).toBeGreaterThan(0);
    // Its usage counts toward the conversation's, like any model call's.
    const modelCalls = stream.filter((e) => e.type === 'ModelCallCompleted').map((e) => e.data as any);
    const state = fold(stream as unknown as ConversationEnvelope[]) as ExistingConversation;
    const input = [...modelCalls, ...summaries].reduce((n, d) => n + d.inputTokens, 0);
    expect(state.usage.inputTokens).toBe(input);
    const last = await parley.call('GET', `/api/v1/conversations/${id}?minPosition=${afterThreePosition}`);
    expect(last.body).toMatchObject({
      biInputTokenCount: state.usage.inputTokens,
      biOutputTokenCount: state.usage.outputTokens,
    });

    // Replay: the stream up to the last model call gives its prompt again, without the model.
    const requestsBefore = parley.simulator.requests.length;
    const lastCall = stream.findLastIndex((e) => e.type === 'ModelCallStarted');
    const replayed = fold(stream.slice(0, lastCall) as unknown as ConversationEnvelope[]) as ExistingConversation;
    expect(buildMessages(replayed)).toEqual(roleAndText(afterThree[1]));
    expect(parley.simulator.requests).toHaveLength(requestsBefore);
  });

  it('clears the memory over HTTP: the next prompt holds nothing before it, the stream and messages keep everything', async () => {
    parley.simulator.script([{ reply: { text: 'noted' } }]);
    const id = await start();
    await send(id, 'My name is Ada.');
    const cleared = await clear(id, { reason: 'new topic' });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ conversationId: id, status: 'CO' });
    await send(id, 'What is my name?');
    const last = parley.simulator.requests.at(-1)!;
    expect(roleAndText(last).slice(1)).toEqual([{ role: 'user', content: 'What is my name?' }]);
    expect(JSON.stringify(last.body)).not.toContain('Ada');

    const stream = await events(id);
    expect(stream.find((e) => e.type === 'MemoryCleared')?.data).toEqual({
      throughSequence: 2,
      reason: 'new topic',
      by: 'admin',
    });
    expect(stream.filter((e) => e.type === 'MessageRecorded')).toHaveLength(4);
    const position = (await send(id, 'and now?')).body.position;
    const messages = await parley.call('GET', `/api/v1/conversations/${id}/messages?minPosition=${position}`);
    expect(messages.body.map((m: { llmMessageContent: string }) => m.llmMessageContent)).toEqual([
      'My name is Ada.',
      'noted',
      'What is my name?',
      'noted',
      'and now?',
      'noted',
    ]);
  });

  it('clears the memory over NATS, and refuses it there as over HTTP', async () => {
    parley.simulator.script([{ reply: { text: 'noted' } }]);
    const id = await start();
    await send(id, 'Remember 42.');
    const done = await nats('clearMemory', { conversationId: id, reason: 'over nats' });
    expect(done.error).toBeUndefined();
    expect(done.result).toMatchObject({ conversationId: id, status: 'CO' });
    await send(id, 'Which number?');
    expect(roleAndText(parley.simulator.requests.at(-1)!).slice(1)).toEqual([
      { role: 'user', content: 'Which number?' },
    ]);
    await parley.call('POST', `/api/v1/conversations/${id}/terminate`, {});
    const refused = await nats('clearMemory', { conversationId: id });
    expect(refused.error).toMatchObject({ code: 'CONVERSATION_CLOSED' });
  });

  it('refuses a clear while a turn runs, while paused, when closed, for an unknown id or bad input, and records nothing', async () => {
    const id = await start();
    parley.simulator.script([{ reply: { text: 'slow' } }]);
    parley.simulator.setLatency(1_500);
    const running = await parley.call('POST', `/api/v1/conversations/${id}/messages`, {
      content: 'take your time',
      wait: false,
    });
    expect(running.status).toBe(202);
    const count = (await events(id)).length;
    const busy = await clear(id);
    expect([busy.status, busy.body.error.code]).toEqual([409, 'CONVERSATION_BUSY']);
    expect((await events(id)).length).toBe(count);

    const paused = await start();
    await parley.call('POST', `/api/v1/conversations/${paused}/pause`, {});
    const onPaused = await clear(paused);
    expect([onPaused.status, onPaused.body.error.code]).toEqual([409, 'CONVERSATION_PAUSED']);

    const closed = await start();
    await parley.call('POST', `/api/v1/conversations/${closed}/terminate`, {});
    const onClosed = await clear(closed);
    expect([onClosed.status, onClosed.body.error.code]).toEqual([409, 'CONVERSATION_CLOSED']);

    // The owner client may clear its conversation; another client and an auditor may not.
    const key = async (subject: string, roles: string[]) =>
      (await parley.call('POST', '/api/v1/keys', { subject, roles })).body.key as string;
    const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
    const [alice, bob, auditor] = [
      await key('alice', ['client']),
      await key('bob', ['client']),
      await key('audit', ['auditor']),
    ];
    const own = (
      await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, bearer(alice))
    ).body.conversationId as string;
    const path = `/api/v1/conversations/${own}/memory/clear`;
    const byBob = await parley.call('POST', path, {}, bearer(bob));
    const byAuditor = await parley.call('POST', path, {}, bearer(auditor));
    expect([byBob.status, byAuditor.status]).toEqual([403, 403]);
    expect((await events(own)).map((e) => e.type)).toEqual(['ConversationStarted']);
    const byAlice = await parley.call('POST', path, { reason: 'mine' }, bearer(alice));
    expect(byAlice.status).toBe(200);
    expect((await events(own)).at(-1)?.data).toEqual({ throughSequence: 0, reason: 'mine', by: 'alice' });

    const unknown = await clear('0193f0a0-0000-7000-8000-00000000abcd');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const fresh = await start();
    const bad = await clear(fresh, { reason: 'x'.repeat(2001), extra: true });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await events(fresh)).map((e) => e.type)).toEqual(['ConversationStarted']);
  });
});

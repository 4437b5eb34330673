import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { connect, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** Emitter subjects carry no prefix: a unique one keeps parallel runs apart. */
const APPOINTMENTS = `appointments-${randomUUID()}.request`;

/** The test catalog plus tools for repositories and an action whose skill is disclosed on request. */
function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  const lookup = (code: string, description: string) => ({ code, description, llmToolBeanName: 'orderStatus' });
  return {
    ...base,
    tools: [
      ...base.tools,
      lookup('BOOK_MON', 'Books the Monday slot.'),
      lookup('BOOK_TUE', 'Books the Tuesday slot.'),
      lookup('FAQ', 'Answers from the FAQ.'),
      lookup('REFUND_CHECK', 'Checks whether an order can be refunded.'),
      {
        code: 'APPOINTMENT',
        description: 'User needs an appointment',
        returnDirect: true,
        skipResponse: true,
        config: { kind: 'emitter', emitter: APPOINTMENTS, schema: [{ parameter: 'day', type: 'string' }] },
      },
    ],
    skills: [
      {
        code: 'REFUNDS',
        description: 'Refund rules',
        llmSkillPrompt: 'Check the order before promising a refund.',
        tools: ['REFUND_CHECK'],
      },
    ],
    actions: [
      ...base.actions,
      {
        code: 'SKILLED',
        description: 'Refunds on request',
        llmModel: 'SIM-CHAT',
        llmConfiguration: 'TEST',
        llmMemoryStrategy: 'FULL',
        skills: [{ skill: 'REFUNDS', disclosure: 'on_request' }],
      },
    ],
  };
}

describe('tools inside a conversation: repositories, progressive disclosure, metrics', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('tools_in_conv', {}, catalog);
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string) =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const repositories = (id: string) => `/api/v1/conversations/${id}/tool-repositories`;
  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const offered = (n: number): string[] => (parley.simulator.requests[n].body?.tools ?? []).map((t) => t.function.name);

  it('offers a triggerOnce repository’s tools until one of them completes, then removes the repository and refuses the others', async () => {
    const id = await start('CHAT');
    const added = await parley.call('POST', repositories(id), {
      repositoryId: 'slots',
      options: { triggerOnce: true },
      tools: ['BOOK_MON', 'BOOK_TUE'],
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ conversationId: id, status: 'NS' });
    parley.simulator.script([
      { when: { toolResult: { name: 'BOOK_MON' } }, reply: { text: 'Booked for Monday.' } },
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            { name: 'BOOK_MON', arguments: { orderId: 'S-1' }, id: 'call_mon' },
            { name: 'BOOK_TUE', arguments: { orderId: 'S-1' }, id: 'call_tue' },
          ],
        },
      },
    ]);

    const res = await send(id, 'book me a slot');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Booked for Monday.' });
    expect(offered(0)).toEqual(['AskUserQuestion', 'BOOK_MON', 'BOOK_TUE']);
    expect(offered(1)).toEqual(['AskUserQuestion']);
    const [completed] = await dataOf(id, 'ToolCallCompleted');
    expect(JSON.parse(completed.output)).toMatchObject({ orderId: 'S-1', status: 'shipped' });
    const [refused] = await dataOf(id, 'ToolCallFailed');
    expect(refused).toMatchObject({ toolCallId: 'call_tue', code: 'NOT_ALLOWED' });
    expect(await dataOf(id, 'ToolRepositoryRemoved')).toEqual([
      { repositoryId: 'slots', reason: 'triggered', triggeredBy: 'call_mon' },
    ]);
    const gone = await parley.call('DELETE', `${repositories(id)}/slots`);
    expect([gone.status, gone.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('narrows the offer to an exclusive repository and AskUserQuestion, and restores it on removal', async () => {
    const id = await start('ANSWER');
    await parley.call('POST', repositories(id), { repositoryId: 'faq', tools: ['FAQ'] });
    const changed = await parley.call('PUT', `${repositories(id)}/faq`, {
      options: { exclusive: true },
      tools: ['FAQ'],
    });
    expect(changed.status).toBe(200);
    parley.simulator.script([
      { when: { toolResult: {} }, reply: { text: 'Done.' } },
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'E-1' } }] } },
    ]);

    await send(id, 'where is E-1?');
    expect(offered(0)).toEqual(['FAQ', 'AskUserQuestion']);
    expect(await dataOf(id, 'ToolCallFailed')).toEqual([expect.objectContaining({ code: 'NOT_ALLOWED' })]);
    expect(await dataOf(id, 'ToolRepositoryChanged')).toEqual([
      expect.objectContaining({ repositoryId: 'faq', options: { triggerOnce: false, exclusive: true } }),
    ]);

    const removed = await parley.call('DELETE', `${repositories(id)}/faq`);
    expect([removed.status, removed.body.status]).toEqual([200, 'CO']);
    parley.simulator.reset();
    await send(id, 'thanks');
    expect(offered(0)).toEqual(['ORDER_STATUS', 'AskUserQuestion']);
  });

  it('emits seed 002’s tool-matching event naming the repository, and ends the turn without a reply', async () => {
    const nats: NatsConnection = await connect({ servers: 'nats://127.0.0.1:4222' });
    try {
      const received = nats.subscribe(APPOINTMENTS, { max: 1 });
      await nats.flush();
      const id = await start('CHAT');
      await parley.call('POST', repositories(id), {
        repositoryId: 'appointments',
        options: { triggerOnce: true, exclusive: true },
        tools: ['APPOINTMENT'],
      });
      parley.simulator.script([
        { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'APPOINTMENT', arguments: { day: 'friday' } }] } },
      ]);

      const res = await send(id, 'I want an appointment on Friday');
      expect(res.body).toMatchObject({ status: 'CO', reply: null });
      expect(parley.simulator.requests).toHaveLength(1);
      for await (const message of received) {
        expect(message.json()).toMatchObject({
          appId: 'SUPPORT',
          sessionId: id,
          repositoryId: 'appointments',
          name: 'APPOINTMENT',
          values: { day: 'friday' },
        });
      }
      expect(received.getProcessed()).toBe(1);
      expect(await dataOf(id, 'ToolRepositoryRemoved')).toEqual([
        expect.objectContaining({ repositoryId: 'appointments', reason: 'triggered' }),
      ]);
    } finally {
      await nats.close();
    }
  });

  it('refuses a duplicate id, a clashing or unknown tool, a bad body and a closed conversation', async () => {
    const id = await start('ANSWER');
    const body = { repositoryId: 'r1', tools: ['FAQ'] };
    expect((await parley.call('POST', repositories(id), body)).status).toBe(201);
    const refusal = async (method: string, path: string, payload?: unknown) => {
      const res = await parley.call(method, path, payload);
      return [res.status, res.body.error.code];
    };
    expect(await refusal('POST', repositories(id), body)).toEqual([409, 'CONFLICT']);
    expect(await refusal('POST', repositories(id), { repositoryId: 'r2', tools: ['ORDER_STATUS'] })).toEqual([
      409,
      'CONFLICT',
    ]);
    expect(await refusal('POST', repositories(id), { repositoryId: 'r3', tools: ['NOPE'] })).toEqual([
      404,
      'NOT_FOUND',
    ]);
    expect(await refusal('POST', repositories(id), { repositoryId: 'r4', tools: [] })).toEqual([
      400,
      'VALIDATION_FAILED',
    ]);
    expect(await refusal('PUT', `${repositories(id)}/nope`, { tools: ['FAQ'] })).toEqual([404, 'NOT_FOUND']);
    await parley.call('POST', `/api/v1/conversations/${id}/terminate`, {});
    expect(await refusal('DELETE', `${repositories(id)}/r1`)).toEqual([409, 'CONVERSATION_CLOSED']);
    expect(await dataOf(id, 'ToolRepositoryAdded')).toHaveLength(1);
  });

  it('discloses a skill’s tools only after the model asks for the skill, then runs them', async () => {
    parley.simulator.script([
      { when: { toolResult: { name: 'REFUND_CHECK' } }, reply: { text: 'R-1 can be refunded.' } },
      {
        when: { toolResult: { name: 'use_skill_REFUNDS' } },
        reply: { toolCalls: [{ name: 'REFUND_CHECK', arguments: { orderId: 'R-1' } }] },
      },
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'use_skill_REFUNDS', arguments: {} }] } },
    ]);
    const id = await start('SKILLED');
    const res = await send(id, 'can I get a refund for R-1?');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'R-1 can be refunded.' });

    expect(offered(0)).toEqual(['use_skill_REFUNDS', 'AskUserQuestion']);
    expect(offered(1)).toEqual(['use_skill_REFUNDS', 'AskUserQuestion', 'REFUND_CHECK']);
    const [disclosed] = await dataOf(id, 'SkillDisclosed');
    expect(disclosed).toMatchObject({ skillCode: 'REFUNDS', tools: [{ name: 'REFUND_CHECK', kind: 'in_process' }] });
    const completed = await dataOf(id, 'ToolCallCompleted');
    expect(completed.map((c) => c.name)).toEqual(['use_skill_REFUNDS', 'REFUND_CHECK']);
    expect(completed[0].output).toContain('Check the order before promising a refund.');
    expect(JSON.parse(completed[1].output)).toMatchObject({ orderId: 'R-1' });
  });

  it('counts each tool call it runs on /metrics, labelled by kind and outcome', async () => {
    const count = async () => {
      const metrics = await (await fetch(`${parley.url}/metrics`)).text();
      const line = metrics.split('\n').find((l) => l.startsWith('llm_tool_call_count{kind="in_process",outcome="ok"}'));
      return Number(line?.split(' ').at(-1) ?? 0);
    };
    const before = await count();
    parley.simulator.script([
      { when: { toolResult: {} }, reply: { text: 'Shipped.' } },
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'M-1' } }] } },
    ]);
    await send(await start('ANSWER'), 'where is M-1?');
    expect(await count()).toBe(before + 1);
  });
});

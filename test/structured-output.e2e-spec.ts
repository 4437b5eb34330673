import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { PG_POOL } from '@parley/platform';
import { PROJECTIONS, rebuildProjections } from '@parley/read-models';
import { freePort, killProcess, startEverythingHttp } from '@parley/testing';
import type { ChildProcess } from 'node:child_process';
import { connect, headers } from 'nats';
import type { Pool } from 'pg';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** Seed 000's llmSchemaOutput: an action whose final reply must match its output schema. */
const TICKET_SCHEMA = {
  type: 'object',
  properties: {
    category: { type: 'string', enum: ['billing', 'delivery', 'other'] },
    priority: { type: 'integer', minimum: 1, maximum: 5 },
  },
  required: ['category', 'priority'],
  additionalProperties: false,
};

function structuredCatalog(simUrl: string) {
  const base = testCatalog(simUrl);
  const classify = {
    ...base.actions[0],
    code: 'CLASSIFY',
    description: 'Classifies a ticket',
    schemas: [{ domainSchema: 'TICKET', llmInputOutput: 'O' }],
  };
  // Two lookups through the same in-process tool: one's output schema matches what it answers,
  // the other's asks for a field it never gives.
  const lookup = (code: string, llmSchemaOutput: string) => ({
    code,
    description: `Looks an order up (${code})`,
    llmToolBeanName: 'orderStatus',
    llmSchemaOutput,
    idempotent: true,
  });
  return {
    ...base,
    domainSchemas: [
      { code: 'TICKET', description: 'A classified ticket', jsonSchema: TICKET_SCHEMA },
      { code: 'SHIPPING', description: 'An order status', jsonSchema: SHIPPING_SCHEMA },
      { code: 'REFUND', description: 'A refund', jsonSchema: { ...SHIPPING_SCHEMA, required: ['status', 'refund'] } },
    ],
    tools: [...base.tools, lookup('ORD_OK', 'SHIPPING'), lookup('ORD_BAD', 'REFUND')],
    actions: [
      ...base.actions,
      classify,
      { ...base.actions[0], code: 'LOOKUP', description: 'Looks orders up', tools: ['ORD_OK', 'ORD_BAD'] },
    ],
  };
}

const SHIPPING_SCHEMA = {
  type: 'object',
  properties: { orderId: { type: 'string' }, status: { type: 'string' } },
  required: ['status'],
};

const lastUserText = (request: { messages: { role: string; content?: unknown }[] }): string => {
  const users = request.messages.filter((m) => m.role === 'user');
  return String(users.at(-1)?.content ?? '');
};

describe('structured output: replies validated against the action output schema', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('structured_output', {}, structuredCatalog);
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CLASSIFY' })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content, timeoutMs: 10_000 });
  const eventsOf = async (id: string) => store.readStream(`conversation-${id}`);
  const messagesOf = async (id: string, position: string) =>
    (await parley.call('GET', `/api/v1/conversations/${id}/messages?minPosition=${encodeURIComponent(position)}`))
      .body as { llmMessageRole: string; llmMessageContent: string | null; output: unknown }[];

  it('returns a valid reply parsed as `output`, records it, and offers it in the queries', async () => {
    parley.simulator.script([{ reply: { text: '{"category":"billing","priority":2}' } }]);
    const id = await start();
    const res = await send(id, 'I was charged twice');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CO', output: { category: 'billing', priority: 2 } });
    // The model was asked for the schema's JSON through the response format.
    const format = parley.simulator.requests[0].body?.response_format as { json_schema: { schema: unknown } };
    expect(format.json_schema.schema).toEqual(TICKET_SCHEMA);

    const events = await eventsOf(id);
    const validated = events.filter((e) => e.type === 'OutputValidated');
    expect(validated).toHaveLength(1);
    expect(validated[0].data).toMatchObject({ valid: true, output: { category: 'billing', priority: 2 } });
    const completed = events.find((e) => e.type === 'ConversationCompleted')!;
    expect(completed.data).toMatchObject({ output: { category: 'billing', priority: 2 } });

    const messages = await messagesOf(id, res.body.position as string);
    const answer = messages.find((m) => m.llmMessageRole === 'AS')!;
    expect(answer.output).toEqual({ category: 'billing', priority: 2 });
    expect(messages.find((m) => m.llmMessageRole === 'US')!.output).toBeNull();
    const conversation = await parley.call(
      'GET',
      `/api/v1/conversations/${id}?minPosition=${encodeURIComponent(res.body.position as string)}`,
    );
    expect(conversation.body.output).toEqual({ category: 'billing', priority: 2 });
  });

  it('repairs an invalid reply in one round: the model is told each error with its path', async () => {
    const seen: string[] = [];
    parley.simulator.script([
      { reply: { text: '{"category":"refund","priority":9}' }, times: 1 },
      {
        reply: (request) => {
          seen.push(lastUserText(request));
          return { text: '{"category":"billing","priority":5}' };
        },
      },
    ]);
    const id = await start();
    const res = await send(id, 'Refund me now!');
    expect(res.body).toMatchObject({ status: 'CO', output: { category: 'billing', priority: 5 } });
    expect(parley.simulator.requests).toHaveLength(2);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/does not match the required output data structure TICKET/);
    expect(seen[0]).toContain('- /category: must be equal to one of the allowed values');
    expect(seen[0]).toContain('- /priority: must be <= 5');

    const validated = (await eventsOf(id)).filter((e) => e.type === 'OutputValidated').map((e) => e.data);
    expect(validated).toMatchObject([
      { valid: false, errors: expect.arrayContaining([{ path: '/priority', message: 'must be <= 5' }]) },
      { valid: true, output: { category: 'billing', priority: 5 } },
    ]);
    const messages = await messagesOf(id, res.body.position as string);
    expect(messages.map((m) => m.llmMessageRole)).toEqual(['US', 'AS', 'SY', 'AS']);
    expect(messages[1].output).toBeNull();
    expect(messages[3].output).toEqual({ category: 'billing', priority: 5 });

    // A rebuild of the read models from the stream gives the same rows, outputs included; nothing is validated again.
    const pool = parley.app.get<Pool>(PG_POOL);
    const rows = async () => [
      ...(await pool.query('select * from rm_messages where conversation_id = $1 order by sequence', [id])).rows,
      ...(await pool.query('select * from rm_conversations where conversation_id = $1', [id])).rows,
    ];
    const before = await rows();
    // Stored sealed with the conversation's key (content encryption); the queries above open it.
    expect(before[3].output).toMatch(/^pc1j\./);
    expect(before[4].output).toMatch(/^pc1j\./);
    await rebuildProjections(pool, store, PROJECTIONS);
    expect(await rows()).toEqual(before);
    expect(parley.simulator.requests).toHaveLength(2);
  });

  it('repairs a reply that is not JSON', async () => {
    const seen: string[] = [];
    parley.simulator.script([
      { reply: { text: 'Sure! It is a delivery issue.' }, times: 1 },
      {
        reply: (request) => {
          seen.push(lastUserText(request));
          return { text: '```json\n{"category":"delivery","priority":3}\n```' };
        },
      },
    ]);
    const id = await start();
    const res = await send(id, 'Where is my parcel?');
    expect(res.body).toMatchObject({ status: 'CO', output: { category: 'delivery', priority: 3 } });
    expect(seen[0]).toMatch(/- \/: is not valid JSON/);
  });

  it('fails the turn with OUTPUT_INVALID when the repaired reply is still invalid', async () => {
    parley.simulator.script([{ reply: { text: '{"category":"billing"}' } }]);
    const id = await start();
    const res = await send(id, 'I was charged twice');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'OUTPUT_INVALID' } });
    expect(res.body.error.message).toMatch(/TICKET.*\/priority: is required/);
    expect(res.body.output).toBeUndefined();
    expect(parley.simulator.requests).toHaveLength(2);
    const types = (await eventsOf(id)).map((e) => e.type);
    expect(types.filter((t) => t === 'OutputValidated')).toHaveLength(2);
    expect(types.at(-1)).toBe('ConversationFailed');
  });

  it('returns output in the NATS reply body too', async () => {
    parley.simulator.script([{ reply: { text: '{"category":"other","priority":1}' } }]);
    const nc = await connect({ servers: parley.config.nats.url! });
    try {
      const request = async (subject: string, payload: unknown) => {
        const h = headers();
        h.set('authorization', `Bearer ${ADMIN_KEY}`);
        const msg = await nc.request(`${parley.config.prefix}.${subject}`, JSON.stringify(payload), {
          headers: h,
          timeout: 15_000,
        });
        return JSON.parse(msg.string()) as { result: Record<string, unknown> };
      };
      const started = await request('cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'CLASSIFY' });
      const sent = await request('cmd.sendMessage', {
        conversationId: started.result.conversationId,
        content: 'Just saying hi',
      });
      expect(sent.result).toMatchObject({ status: 'CO', output: { category: 'other', priority: 1 } });
    } finally {
      await nc.close();
    }
  });

  it('checks a catalog tool’s output against its llmSchemaOutput: a mismatch is a failed call the model is told of', async () => {
    parley.simulator.script([
      {
        when: { callCount: 1 },
        reply: {
          toolCalls: [
            { name: 'ORD_OK', arguments: { orderId: 'A-1001' }, id: 'call_ok' },
            { name: 'ORD_BAD', arguments: { orderId: 'A-1001' }, id: 'call_bad' },
          ],
        },
      },
      { reply: { text: 'It has shipped.' } },
    ]);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'LOOKUP' }))
      .body.conversationId as string;
    const res = await send(id, 'Where is A-1001?');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'It has shipped.' });

    const events = await eventsOf(id);
    // The schemas are frozen into the conversation with its tools.
    const started = events.find((e) => e.type === 'ConversationStarted')!.data as {
      snapshot: { tools: { name: string; outputSchema?: unknown }[] };
    };
    expect(started.snapshot.tools.find((t) => t.name === 'ORD_OK')!.outputSchema).toEqual(SHIPPING_SCHEMA);
    const completed = events.filter((e) => e.type === 'ToolCallCompleted').map((e) => e.data as { name: string });
    expect(completed.map((c) => c.name)).toEqual(['ORD_OK']);
    const failed = events.find((e) => e.type === 'ToolCallFailed')!.data as { name: string; code: string };
    expect(failed).toMatchObject({ name: 'ORD_BAD', code: 'INVALID_OUTPUT' });
    // The model's next request carries the failure as the call's result.
    const second = parley.simulator.requests[1].body as {
      messages: { role: string; content: string; tool_call_id?: string }[];
    };
    const result = second.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_bad')!;
    expect(result.content).toMatch(/INVALID_OUTPUT/);
    expect(result.content).toMatch(/does not match its output schema/);
    expect(result.content).toMatch(/refund/);
  });

  it('leaves an action without an output schema free text', async () => {
    parley.simulator.script([{ reply: { text: 'not json at all' } }]);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    const res = await send(id, 'hello');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'not json at all' });
    expect(res.body).not.toHaveProperty('output');
    expect((await eventsOf(id)).some((e) => e.type === 'OutputValidated')).toBe(false);
  });
});

describe("structured output: an MCP client's llmSchemaOutput checks every tool it lists", () => {
  /** What the client's tools must answer with (server-everything's get-structured-content does). */
  const WEATHER_SCHEMA = {
    type: 'object',
    properties: { temperature: { type: 'number' }, conditions: { type: 'string' } },
    required: ['temperature', 'conditions'],
  };
  let parley: ParleyUnderTest;
  let server: ChildProcess;

  beforeAll(async () => {
    const port = await freePort();
    server = await startEverythingHttp('streamableHttp', port);
    parley = await startParley('mcp_output_schema', {}, (simulatorUrl) => {
      const base = testCatalog(simulatorUrl);
      return {
        ...base,
        domainSchemas: [{ code: 'WEATHER', description: 'A weather report', jsonSchema: WEATHER_SCHEMA }],
        mcpClients: [
          {
            name: 'evweather',
            description: 'Weather reports',
            mcpTransportType: 'SH',
            mcpConnectionUrl: `http://127.0.0.1:${port}/mcp`,
            llmSchemaOutput: 'WEATHER',
          },
        ],
        actions: [
          ...base.actions,
          { ...base.actions[0], code: 'MCP_CHECKED', description: 'Checked MCP tools', mcpClients: ['evweather'] },
        ],
      };
    });
  }, 60_000);
  afterAll(async () => {
    await parley?.close();
    if (server) await killProcess(server);
  });

  it('freezes the schema into each of its tools; a matching result completes, a text that is not JSON fails as INVALID_OUTPUT', async () => {
    parley.simulator.script([
      { when: { toolResult: { name: 'evweather__get-sum' } }, reply: { text: 'Checked.' } },
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            { name: 'evweather__get-structured-content', arguments: { location: 'Chicago' }, id: 'call_weather' },
            { name: 'evweather__get-sum', arguments: { a: 2, b: 3 }, id: 'call_sum' },
          ],
        },
      },
    ]);
    const id = (
      await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'MCP_CHECKED' })
    ).body.conversationId as string;
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'weather and a sum' });
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Checked.' });

    const events = await parley.app.get<EventStore>(EVENT_STORE).readStream(`conversation-${id}`);
    const started = events.find((e) => e.type === 'ConversationStarted')!.data as {
      snapshot: { tools: { name: string; kind: string; outputSchema?: unknown }[] };
    };
    const mcpTools = started.snapshot.tools.filter((t) => t.kind === 'mcp');
    expect(mcpTools.length).toBeGreaterThan(2);
    for (const tool of mcpTools) expect(tool.outputSchema).toEqual(WEATHER_SCHEMA);

    const completed = events.filter((e) => e.type === 'ToolCallCompleted').map((e) => e.data as { toolCallId: string });
    expect(completed.map((c) => c.toolCallId)).toEqual(['call_weather']);
    const failed = events.filter((e) => e.type === 'ToolCallFailed').map((e) => e.data as Record<string, string>);
    expect(failed).toEqual([expect.objectContaining({ toolCallId: 'call_sum', code: 'INVALID_OUTPUT' })]);
    expect(failed[0].message).toContain('not JSON');
  });
});

import type { ChildProcess } from 'node:child_process';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { EVERYTHING_BIN, everythingChildren, freePort, killProcess, startEverythingHttp } from '@parley/testing';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * server-everything reached the three ways the catalog allows: started by the pool over stdio,
 * and over streamable HTTP and SSE on loopback ports. One action per transport.
 */
function catalog(simulatorUrl: string, ports: { sh: number; se: number }) {
  const base = testCatalog(simulatorUrl);
  const action = (code: string, mcpClient: string) => ({
    code,
    description: `MCP over ${mcpClient}`,
    llmModel: 'SIM-CHAT',
    llmConfiguration: 'TEST',
    llmMemoryStrategy: 'FULL',
    mcpClients: [mcpClient],
  });
  return {
    ...base,
    mcpClients: [
      {
        name: 'everything',
        description: 'Demo tools',
        mcpTransportType: 'ST',
        command: 'node',
        args: [EVERYTHING_BIN, 'stdio'],
      },
      {
        name: 'evhttp',
        description: 'Demo tools',
        mcpTransportType: 'SH',
        mcpConnectionUrl: `http://127.0.0.1:${ports.sh}/mcp`,
      },
      {
        name: 'evsse',
        description: 'Demo tools',
        mcpTransportType: 'SE',
        mcpConnectionUrl: `http://127.0.0.1:${ports.se}/sse`,
      },
    ],
    actions: [...base.actions, action('MCP_ST', 'everything'), action('MCP_SH', 'evhttp'), action('MCP_SE', 'evsse')],
  };
}

describe('MCP tools inside a conversation (real server-everything, nothing mocked)', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  const ports = { sh: 0, se: 0 };
  let sh: ChildProcess;
  let se: ChildProcess;

  beforeAll(async () => {
    ports.sh = await freePort();
    ports.se = await freePort();
    [sh, se] = await Promise.all([
      startEverythingHttp('streamableHttp', ports.sh),
      startEverythingHttp('sse', ports.se),
    ]);
    parley = await startParley('mcp_in_conv', { MCP_STDIO_COMMANDS: `node ${EVERYTHING_BIN} stdio` }, (url) =>
      catalog(url, ports),
    );
    store = parley.app.get(EVENT_STORE);
  }, 60_000);
  afterAll(async () => {
    await parley?.close();
    await Promise.all([sh && killProcess(sh), se && killProcess(se)]);
    // The pool's stdio server went with the app: nothing is left running.
    expect(everythingChildren()).toEqual([]);
  });
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string) =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);

  it.each([
    { transport: 'stdio', action: 'MCP_ST', client: 'everything' },
    { transport: 'streamable HTTP', action: 'MCP_SH', client: 'evhttp' },
    { transport: 'SSE', action: 'MCP_SE', client: 'evsse' },
  ])('runs echo and get-sum over $transport and records their results', async ({ action, client }) => {
    const [echo, sum] = [`${client}__echo`, `${client}__get-sum`];
    parley.simulator.script([
      { when: { toolResult: { name: sum } }, reply: { text: 'Echoed and added.' } },
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            { name: echo, arguments: { message: `hi over ${client}` } },
            { name: sum, arguments: { a: 2, b: 3 } },
          ],
        },
      },
    ]);
    const id = await start(action);
    const res = await send(id, 'echo and add');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Echoed and added.' });

    const offered = (parley.simulator.requests[0].body?.tools ?? []).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining([echo, sum]));
    expect((await dataOf(id, 'ToolCallStarted')).map((s) => [s.name, s.kind])).toEqual([
      [echo, 'mcp'],
      [sum, 'mcp'],
    ]);
    expect((await dataOf(id, 'ToolCallCompleted')).map((c) => c.output)).toEqual([
      `Echo: hi over ${client}`,
      'The sum of 2 and 3 is 5.',
    ]);
    const toolMessages = parley.simulator.requests[1].body!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.content)).toEqual([`Echo: hi over ${client}`, 'The sum of 2 and 3 is 5.']);
  });

  it('reconnects to a streamable HTTP server killed and restarted between two tool calls', async () => {
    const echo = 'evhttp__echo';
    parley.simulator.script([
      { when: { toolResult: { name: echo } }, reply: { text: 'Echoed.' } },
      {
        when: { noToolResult: true },
        reply: (request) => ({
          toolCalls: [{ name: echo, arguments: { message: String(request.messages.at(-1)?.content) } }],
        }),
      },
    ]);
    const id = await start('MCP_SH');
    expect((await send(id, 'one')).body).toMatchObject({ status: 'CO' });

    await killProcess(sh);
    sh = await startEverythingHttp('streamableHttp', ports.sh);
    expect((await send(id, 'two')).body).toMatchObject({ status: 'CO', reply: 'Echoed.' });

    expect((await dataOf(id, 'ToolCallCompleted')).map((c) => c.output)).toEqual(['Echo: one', 'Echo: two']);
    expect(await dataOf(id, 'ToolCallFailed')).toEqual([]);
  });

  it('tells the model when the MCP server is down, and counts it in llm_mcp_errors_total', async () => {
    const echo = 'evsse__echo';
    parley.simulator.script([
      { when: { toolResult: { name: echo } }, reply: { text: 'The echo service is down.' } },
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: echo, arguments: { message: 'anyone?' } }] } },
    ]);
    const id = await start('MCP_SE');
    await killProcess(se);

    expect((await send(id, 'echo please')).body).toMatchObject({ status: 'CO', reply: 'The echo service is down.' });
    const [failed] = await dataOf(id, 'ToolCallFailed');
    expect(failed).toMatchObject({ name: echo, code: 'UNAVAILABLE' });
    expect(failed.message).toContain("MCP server 'evsse' could not be reached");
    const metrics = await (await fetch(`${parley.url}/metrics`)).text();
    expect(metrics).toMatch(/^llm_mcp_errors_total\{client="evsse",kind="connect"\} [1-9]/m);
    expect(metrics).toMatch(/^llm_tool_call_count\{kind="mcp",outcome="error"\} [1-9]/m);
  }, 30_000);
});

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { ChildProcess } from 'node:child_process';
import { CatalogService } from '@parley/catalog';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import {
  createTestDatabase,
  freePort,
  killProcess,
  startEverythingHttp,
  startSimulator,
  until,
  type Simulator,
  type TestDatabase,
} from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { AppModule } from '../apps/server/src/app.module';
import { callerOf, startParley, testConfig, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * The test catalog plus: an action that opts out of AskUserQuestion, one whose configuration
 * rejects an unapproved call after a second, and one that confirms its calls by itself.
 */
function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  const cancel = base.actions.find((a) => a.code === 'CANCEL')!;
  return {
    ...base,
    configurations: [...base.configurations, { ...base.configurations[0], code: 'FAST', toolApprovalTimeoutMs: 1000 }],
    actions: [
      ...base.actions,
      { ...cancel, code: 'QUIET', askUserQuestion: false },
      { ...cancel, code: 'CANCEL_FAST', llmConfiguration: 'FAST' },
      { ...cancel, code: 'CANCEL_AUTO', autoConfirm: true },
    ],
  };
}

const cancelScript = (orderId: string, id: string) => [
  {
    when: { noToolResult: true },
    reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId }, id }] },
  },
  { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Handled.' } },
];

describe('the question tool and approvals, as seeds 000 and 001 have them', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('approvals', {}, catalog);
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string, extra: Record<string, unknown> = {}) => {
    const res = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode, ...extra });
    expect(res.status).toBe(201);
    return res.body.conversationId as string;
  };
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const offered = (i: number) =>
    ((parley.simulator.requests[i].body as any).tools ?? []).map((t: any) => t.function.name as string);

  it('offers AskUserQuestion to an action that never asked for it, and lets the model ask', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            { name: 'AskUserQuestion', arguments: { questions: [{ key: 'size', question: 'Which size?' }] } },
          ],
        },
      },
    ]);
    const id = await start('CHAT');
    const res = await send(id, 'I want a shirt');
    expect(res.body).toMatchObject({
      status: 'WA',
      pendingQuestion: { questions: [{ key: 'size', question: 'Which size?' }] },
    });
    expect(offered(0)).toEqual(['AskUserQuestion']);
    expect(await dataOf(id, 'ToolCallFailed')).toEqual([]);
  });

  it('does not offer it to an action that opts out', async () => {
    parley.simulator.script([{ reply: { text: 'Hello.' } }]);
    const id = await start('QUIET');
    expect((await send(id, 'hi')).body).toMatchObject({ status: 'CO', reply: 'Hello.' });
    expect(offered(0)).toEqual(['ORDER_STATUS', 'CANCEL_ORDER']);
  });

  it('rejects a call nobody approves within tool_approval_timeout_ms as timed out, and the turn goes on', async () => {
    parley.simulator.script(cancelScript('T-1', 'call_t1'));
    const id = await start('CANCEL_FAST');
    const waiting = await send(id, 'cancel T-1');
    expect(waiting.body).toMatchObject({ status: 'WA', pendingApprovals: [{ toolCallId: 'call_t1' }] });
    const [requested] = await dataOf(id, 'ToolCallApprovalRequested');
    const left = Date.parse(requested.expiresAt) - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1000);

    await until(async () => (await dataOf(id, 'ConversationCompleted')).length > 0, 10_000);
    expect(await dataOf(id, 'ToolCallRejected')).toEqual([
      expect.objectContaining({ toolCallId: 'call_t1', code: 'APPROVAL_TIMEOUT' }),
    ]);
    expect(await dataOf(id, 'ToolCallStarted')).toEqual([]);
    expect(await dataOf(id, 'ConversationCompleted')).toEqual([expect.objectContaining({ reply: 'Handled.' })]);
    const toolMessage = parley.simulator.requests.at(-1)!.body!.messages.at(-1) as { content: string };
    expect(toolMessage.content).toContain('not approved in time');
    // Too late to decide now.
    const late = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_t1/approve`, {});
    expect(late.status).toBe(409);
  });

  it('waits for a human by default, with the default timeout of five minutes', async () => {
    parley.simulator.script(cancelScript('W-1', 'call_w1'));
    const id = await start('CANCEL');
    expect((await send(id, 'cancel W-1')).body).toMatchObject({ status: 'WA' });
    const [requested] = await dataOf(id, 'ToolCallApprovalRequested');
    const left = Date.parse(requested.expiresAt) - Date.now();
    expect(left).toBeGreaterThan(290_000);
    expect(left).toBeLessThanOrEqual(300_000);
    const rejected = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_w1/reject`, {});
    expect(rejected.body).toMatchObject({ status: 'CO' });
    expect(await dataOf(id, 'ToolCallRejected')).toEqual([expect.not.objectContaining({ code: 'APPROVAL_TIMEOUT' })]);
  });

  it('runs a call that needs approval without waiting when the conversation starts with autoConfirm', async () => {
    parley.simulator.script(cancelScript('A-1', 'call_a1'));
    const id = await start('CANCEL', { autoConfirm: true });
    expect((await send(id, 'cancel A-1')).body).toMatchObject({ status: 'CO', reply: 'Handled.' });
    expect(await dataOf(id, 'ToolCallApprovalRequested')).toEqual([]);
    expect(await dataOf(id, 'ToolCallApproved')).toEqual([{ toolCallId: 'call_a1', by: 'auto' }]);
    expect(await dataOf(id, 'ToolCallCompleted')).toEqual([expect.objectContaining({ toolCallId: 'call_a1' })]);
  });

  it("runs it without waiting when the action's autoConfirm is set", async () => {
    parley.simulator.script(cancelScript('A-2', 'call_a2'));
    const id = await start('CANCEL_AUTO');
    expect((await send(id, 'cancel A-2')).body).toMatchObject({ status: 'CO', reply: 'Handled.' });
    expect(await dataOf(id, 'ToolCallApproved')).toEqual([{ toolCallId: 'call_a2', by: 'auto' }]);
  });

  it('refuses an autoConfirm that is not a boolean, and starts nothing', async () => {
    const res = await parley.call('POST', '/api/v1/conversations', {
      agentCode: 'HELPDESK',
      actionCode: 'CANCEL',
      autoConfirm: 'yes',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toEqual(['autoConfirm']);
  });
});

describe('an approval decided after a restart', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  const apps: NestFastifyApplication[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('approval_restart');
    simulator = await startSimulator();
  });
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await simulator.close();
    await db.drop();
  });

  it('resumes the turn the closed process left waiting', async () => {
    // Both processes share the database, the prefix and the key, as a restart does.
    const config = testConfig(db.url, { PORT: '0' });
    const startApp = async () => {
      const app = await createHttpApp(AppModule.forRoot(config), config, createLogger({ level: 'silent' }));
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      return { app, call: callerOf(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`) };
    };
    const first = await startApp();
    await first.app.get(CatalogService).apply(testCatalog(simulator.url), { dryRun: false });
    simulator.script(cancelScript('R-1', 'call_r1'));
    const started = await first.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CANCEL' });
    const id = started.body.conversationId as string;
    const waiting = await first.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'cancel R-1' });
    expect(waiting.body).toMatchObject({ status: 'WA', pendingApprovals: [{ toolCallId: 'call_r1' }] });
    await first.app.close();

    const second = await startApp();
    const approved = await second.call('POST', `/api/v1/conversations/${id}/tool-calls/call_r1/approve`, {});
    expect(approved.body).toMatchObject({ status: 'CO', reply: 'Handled.' });
    const events = await second.app.get<EventStore>(EVENT_STORE).readStream(`conversation-${id}`);
    expect(events.filter((e) => e.type === 'ToolCallCompleted').map((e) => (e.data as any).toolCallId)).toEqual([
      'call_r1',
    ]);
  });
});

describe('MCP tools that require approval, per client or per tool', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let server: ChildProcess;

  beforeAll(async () => {
    const port = await freePort();
    server = await startEverythingHttp('streamableHttp', port);
    const url = `http://127.0.0.1:${port}/mcp`;
    parley = await startParley('mcp_approvals', {}, (simulatorUrl) => {
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
            name: 'evecho',
            description: 'Echo waits',
            mcpTransportType: 'SH',
            mcpConnectionUrl: url,
            requireApproval: ['echo'],
          },
          {
            name: 'evall',
            description: 'All wait',
            mcpTransportType: 'SH',
            mcpConnectionUrl: url,
            requireApproval: ['*'],
          },
        ],
        actions: [...base.actions, action('MCP_ECHO', 'evecho'), action('MCP_ALL', 'evall')],
      };
    });
    store = parley.app.get(EVENT_STORE);
  }, 60_000);
  afterAll(async () => {
    await parley?.close();
    if (server) await killProcess(server);
  });
  beforeEach(() => parley.simulator.reset());

  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const run = async (actionCode: string) => {
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
    return { id, reply: await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'go' }) };
  };
  const bothCalls = (client: string) => [
    { when: { toolResult: { name: `${client}__echo` } }, reply: { text: 'Both done.' } },
    {
      when: { noToolResult: true },
      reply: {
        toolCalls: [
          { name: `${client}__get-sum`, arguments: { a: 2, b: 3 }, id: 'call_sum' },
          { name: `${client}__echo`, arguments: { message: 'hi' }, id: 'call_echo' },
        ],
      },
    },
  ];

  it('freezes approval into the named tool only: get-sum runs, echo waits until approved', async () => {
    parley.simulator.script(bothCalls('evecho'));
    const { id, reply } = await run('MCP_ECHO');
    expect(reply.body).toMatchObject({ status: 'WA', pendingApprovals: [{ toolCallId: 'call_echo' }] });
    const [started] = await dataOf(id, 'ConversationStarted');
    const approvals = Object.fromEntries(
      started.snapshot.tools
        .filter((t: { kind: string }) => t.kind === 'mcp')
        .map((t: { name: string; approval: string }) => [t.name, t.approval]),
    );
    expect(approvals).toMatchObject({ evecho__echo: 'always', 'evecho__get-sum': 'never' });
    expect((await dataOf(id, 'ToolCallCompleted')).map((c) => c.toolCallId)).toEqual(['call_sum']);

    const approved = await parley.call('POST', `/api/v1/conversations/${id}/tool-calls/call_echo/approve`, {});
    expect(approved.body).toMatchObject({ status: 'CO', reply: 'Both done.' });
  });

  it("makes every tool of a client with requireApproval '*' wait", async () => {
    parley.simulator.script(bothCalls('evall'));
    const { reply } = await run('MCP_ALL');
    expect(reply.body).toMatchObject({ status: 'WA' });
    expect(reply.body.pendingApprovals.map((p: { toolCallId: string }) => p.toolCallId).sort()).toEqual([
      'call_echo',
      'call_sum',
    ]);
  });

  it('refuses a blank tool name in requireApproval at apply, naming the field, and writes nothing', async () => {
    const res = await parley.call('POST', '/api/v1/catalog/apply', {
      mcpClients: [
        {
          name: 'evbad',
          description: 'Bad',
          mcpTransportType: 'SH',
          mcpConnectionUrl: 'http://127.0.0.1:1/mcp',
          requireApproval: ['echo', ' '],
        },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toEqual([
      'mcpClients[0].requireApproval[1]',
    ]);
    expect((await parley.call('GET', '/api/v1/catalog/mcp-clients/evbad')).status).toBe(404);
  });
});

import { CatalogService, SecretCipher } from '@parley/catalog';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { DATA_SOURCE } from '@parley/platform';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { StartConversationHandler } from '../libs/conversation/src/commands/start-conversation/start-conversation.handler';
import { startParley, type ParleyUnderTest, natsCall } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const STATIC = 'tenant-STATIC-4711';
const HEADER_KEY = 'hdr-SECRET-0815';
const URL_TOKEN = 'url-SECRET-1234';
/** An allowed stdio command that leaves a directory behind when it is spawned. */
const SPAWNED = join(tmpdir(), `parley-spawned-${process.pid}-${Date.now()}`);
const MARKING_ARGS = ['-e', `require('fs').mkdirSync('${SPAWNED}')`];

/** The test catalog plus an HTTP tool holding credentials and static values, and a stdio MCP client. */
function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  return {
    ...base,
    tools: [
      ...base.tools,
      {
        code: 'CRM',
        description: 'Finds a customer in the CRM.',
        config: {
          kind: 'http',
          url: `https://crm.example.com/find?token=${URL_TOKEN}`,
          headers: { 'x-api-key': HEADER_KEY },
          schema: [
            { parameter: 'email', type: 'string', description: 'The customer’s e-mail' },
            { parameter: 'tenant', type: 'string', value: STATIC },
            { parameter: 'region', type: 'string', ignore: true, value: 'eu-STATIC' },
          ],
        },
      },
      { code: 'SHARED', description: 'A lookup shared with clients.', llmToolBeanName: 'orderStatus' },
    ],
    mcpClients: [
      {
        name: 'remote',
        description: 'A remote MCP server',
        mcpTransportType: 'SH',
        mcpConnectionUrl: 'https://mcp.example.com/mcp',
        headers: { authorization: `Bearer ${HEADER_KEY}` },
      },
      { name: 'marking', description: 'Marks its spawn', mcpTransportType: 'ST', command: 'node', args: MARKING_ARGS },
      {
        name: 'hidden',
        description: 'Not on any action',
        mcpTransportType: 'SH',
        mcpConnectionUrl: 'https://h.example.com/mcp',
      },
    ],
    actions: [
      ...base.actions,
      {
        code: 'MARKING',
        description: 'Spawns the marking MCP server',
        llmModel: 'SIM-CHAT',
        mcpClients: ['marking'],
      },
      {
        code: 'REMOTE',
        description: 'Uses the remote MCP server',
        llmModel: 'SIM-CHAT',
        llmConfiguration: 'TEST',
        llmMemoryStrategy: 'FULL',
        mcpClients: ['remote'],
      },
      {
        code: 'CRM_CHAT',
        description: 'Chat with the CRM',
        llmModel: 'SIM-CHAT',
        llmConfiguration: 'TEST',
        llmMemoryStrategy: 'FULL',
        tools: ['CRM'],
      },
    ],
  };
}

describe('the catalog as clients see it: credentials, access and what reaches the model', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let nc: NatsConnection;
  let alice: string;

  beforeAll(async () => {
    parley = await startParley(
      'catalog_acl',
      {
        MCP_HTTP_ALLOWED_HOSTS: '*.example.com',
        MCP_STDIO_COMMANDS: `npx @modelcontextprotocol/server-everything, node ${MARKING_ARGS.join(' ')}`,
      },
      catalog,
    );
    store = parley.app.get(EVENT_STORE);
    nc = await connect({ servers: '127.0.0.1:4222' });
    const created = await parley.call('POST', '/api/v1/keys', { subject: 'alice', roles: ['client'] });
    alice = created.body.key as string;
  });
  afterAll(async () => {
    rmSync(SPAWNED, { recursive: true, force: true });
    await nc?.close();
    await parley?.close();
  });

  const asAlice = (method: string, path: string, body?: unknown) => parley.call(method, path, body, bearer(alice));
  const natsQuery = (method: string, payload: unknown, key: string) =>
    natsCall(nc, parley, `qry.${method}`, payload, key);
  const secrets = [HEADER_KEY, URL_TOKEN, STATIC, 'eu-STATIC'];
  const leaks = (value: unknown) => secrets.filter((s) => JSON.stringify(value).includes(s));
  beforeEach(() => parley.simulator.reset());

  const events = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);

  it('never puts a parameter’s static value into the model’s tool schema, ConversationStarted or the model request', async () => {
    const started = await parley.call(
      'POST',
      '/api/v1/conversations',
      { agentCode: 'HELPDESK', actionCode: 'CRM_CHAT' },
      bearer(alice),
    );
    expect(started.status).toBe(201);
    const id = started.body.conversationId as string;
    const sent = await asAlice('POST', `/api/v1/conversations/${id}/messages`, { content: 'who is bob@example.com?' });
    expect(sent.status).toBe(200);
    const [conversationStarted] = await events(id, 'ConversationStarted');
    const crm = (conversationStarted.snapshot.tools as any[]).find((t) => t.name === 'CRM');
    expect(crm.parameters).toEqual({
      type: 'object',
      properties: { email: { type: 'string', description: 'The customer’s e-mail' } },
      required: ['email'],
      additionalProperties: false,
    });
    const stream = (await store.readStream(`conversation-${id}`)).map((e) => e.data);
    const everything = JSON.stringify([stream, parley.simulator.requests]);
    expect(parley.simulator.requests.length).toBeGreaterThan(0);
    for (const secret of [STATIC, 'eu-STATIC', HEADER_KEY, URL_TOKEN]) expect(everything).not.toContain(secret);
  });

  it('shows a client only what it needs of what it may use, over HTTP and NATS, and never a credential', async () => {
    const tool = await asAlice('GET', '/api/v1/tools/CRM');
    expect(tool.status).toBe(200);
    expect(tool.body).toEqual({
      code: 'CRM',
      description: 'Finds a customer in the CRM.',
      parameters: expect.objectContaining({ properties: { email: expect.any(Object) } }),
    });
    expect((await natsQuery('findToolByCode', { code: 'CRM' }, alice)).result).toEqual(tool.body);
    const notShared = await asAlice('GET', '/api/v1/tools/SHARED');
    expect([notShared.status, notShared.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await natsQuery('findToolByCode', { code: 'SHARED' }, alice)).result).toBeNull();

    const remote = await asAlice('GET', '/api/v1/mcp-clients/remote');
    expect(remote.body).toEqual({ name: 'remote', description: 'A remote MCP server' });
    expect((await asAlice('GET', '/api/v1/mcp-clients/hidden')).status).toBe(404);
    expect((await natsQuery('findMcpClientByName', { name: 'hidden' }, alice)).result).toBeNull();

    const actions = await asAlice('GET', '/api/v1/actions');
    expect(actions.body).toContainEqual({ code: 'CRM_CHAT', description: 'Chat with the CRM' });
    expect(JSON.stringify(actions.body)).not.toContain('Answer briefly.');
    expect((await asAlice('GET', '/api/v1/agents/HELPDESK')).body).toEqual({
      code: 'HELPDESK',
      description: 'Helpdesk',
    });
    const replies = [tool.body, remote.body, actions.body, (await natsQuery('getAllActions', {}, alice)).result];
    expect(replies.flatMap(leaks)).toEqual([]);
    expect(JSON.stringify(replies)).not.toMatch(/crm\.example\.com|mcp\.example\.com|x-api-key/);
  });

  it('shows an admin the whole catalog with every secret as a flag only', async () => {
    const tool = await parley.call('GET', '/api/v1/tools/CRM');
    expect(tool.body.config).toMatchObject({ kind: 'http', url: 'https://crm.example.com/find' });
    expect(tool.body.secretsSet).toEqual(['headers.x-api-key', 'url']);
    const remote = await parley.call('GET', '/api/v1/mcp-clients/remote');
    expect(remote.body).toMatchObject({
      mcpConnectionUrl: 'https://mcp.example.com/mcp',
      headersSet: ['authorization'],
    });
    const viaCatalog = await parley.call('GET', '/api/v1/catalog/tools/CRM');
    const shown = JSON.stringify([tool.body, remote.body, viaCatalog.body]);
    for (const secret of [HEADER_KEY, URL_TOKEN]) expect(shown).not.toContain(secret);
  });

  it('lets a client attach to its conversation only the tools shared with it', async () => {
    const started = await asAlice('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    const id = started.body.conversationId as string;
    const repositories = `/api/v1/conversations/${id}/tool-repositories`;
    const before = (await store.readStream(`conversation-${id}`)).length;
    for (const tools of [['CRM'], ['CANCEL_ORDER'], ['SHARED']]) {
      const refused = await asAlice('POST', repositories, { repositoryId: 'mine', tools });
      expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
        403,
        'FORBIDDEN',
        { tools },
      ]);
    }
    expect((await store.readStream(`conversation-${id}`)).length).toBe(before);

    const shared = await parley.call('PUT', '/api/v1/catalog/tools/SHARED/acl/role:client', { permission: 'read' });
    expect(shared.status).toBe(200);
    const added = await asAlice('POST', repositories, { repositoryId: 'mine', tools: ['SHARED'] });
    expect(added.status).toBe(201);
    expect((await asAlice('GET', '/api/v1/tools/SHARED')).status).toBe(200);
    const stillRefused = await asAlice('PUT', `${repositories}/mine`, { tools: ['SHARED', 'CRM'] });
    expect([stillRefused.status, stillRefused.body.error.details]).toEqual([403, { tools: ['CRM'] }]);
  });

  it('checks the caller’s roles before resolving the snapshot, so a refused start spawns no MCP server', async () => {
    const start = parley.app.get(StartConversationHandler);
    const input = { agentCode: 'HELPDESK', actionCode: 'MARKING', metadata: {} };
    const auditor = { caller: { subject: 'audit-bot', roles: ['auditor' as const] } };
    await expect(start.execute(input, auditor)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(existsSync(SPAWNED)).toBe(false);
    // The marker does tell a spawn: an admin's start runs the command (which is no MCP server, so it fails).
    await start.execute(input, { caller: { subject: 'root', roles: ['admin'] } }).catch(() => undefined);
    expect(existsSync(SPAWNED)).toBe(true);
  });

  describe('an admin credential is not code on the host, nor a way to send a secret elsewhere', () => {
    const marker = join(tmpdir(), `parley-rogue-${process.pid}-${Date.now()}`);
    const rogue = {
      name: 'rogue',
      description: 'Runs a shell command',
      mcpTransportType: 'ST',
      command: 'node',
      args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`],
    };
    const problemsOf = (res: { status: number; body: any }) => [
      res.status,
      res.body.error.code,
      (res.body.error.details?.problems ?? []).map((p: { path: string }) => p.path),
    ];

    it('refuses a stdio MCP command outside MCP_STDIO_COMMANDS when the catalog is changed, and writes nothing', async () => {
      const created = await parley.call('POST', '/api/v1/catalog/mcp-clients', rogue);
      expect(problemsOf(created)).toEqual([400, 'VALIDATION_FAILED', ['command']]);
      expect(created.body.error.details.problems[0].message).toContain('MCP_STDIO_COMMANDS');
      const applied = await parley.call('POST', '/api/v1/catalog/apply', { mcpClients: [rogue] });
      expect(problemsOf(applied)).toEqual([400, 'VALIDATION_FAILED', ['mcpClients[0].command']]);
      expect((await parley.call('GET', '/api/v1/catalog/mcp-clients/rogue')).status).toBe(404);
    });

    it('refuses it again at spawn time, for a catalog written before the list was narrowed', async () => {
      // Written around the checks, as an older Parley (or a wider MCP_STDIO_COMMANDS) would have.
      const unchecked = new CatalogService(parley.app.get(DATA_SOURCE), parley.app.get(SecretCipher));
      const action = { code: 'ROGUE', description: 'x', llmModel: 'SIM-CHAT', mcpClients: ['rogue'] };
      await unchecked.apply({ mcpClients: [rogue], actions: [action] }, { dryRun: false });
      const started = await parley.call('POST', '/api/v1/conversations', {
        agentCode: 'HELPDESK',
        actionCode: 'ROGUE',
      });
      expect(started.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(started.body)).toContain('MCP_STDIO_COMMANDS');
      expect(existsSync(marker)).toBe(false);
    });

    it('refuses a provider or MCP URL that moves to another origin without its secret, or off the allow-list', async () => {
      const provider = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
        description: 'Simulator',
        providerType: 'openai-compatible',
        baseUrl,
        instanceWide: true,
        ...extra,
      });
      const port = new URL(parley.simulator.url).port;
      const moved = await parley.call('PUT', '/api/v1/catalog/providers/SIM', provider(`http://localhost:${port}/v1`));
      expect(problemsOf(moved)).toEqual([400, 'VALIDATION_FAILED', ['apiKey']]);
      expect(moved.body.error.details.problems[0].message).toContain('give this secret again');
      const offList = await parley.call(
        'PUT',
        '/api/v1/catalog/providers/SIM',
        provider('https://collector.evil.test/v1', { apiKey: 'sk-new' }),
      );
      expect(problemsOf(offList)).toEqual([400, 'VALIDATION_FAILED', ['baseUrl']]);
      expect(offList.body.error.details.problems[0].message).toContain('LLM_PROVIDER_ALLOWED_HOSTS');
      expect((await parley.call('GET', '/api/v1/catalog/providers/SIM')).body.baseUrl).toBe(parley.simulator.url);
      const samePlace = await parley.call('PUT', '/api/v1/catalog/providers/SIM', provider(parley.simulator.url));
      expect(samePlace.status).toBe(200);
      const withKey = await parley.call(
        'PUT',
        '/api/v1/catalog/providers/SIM',
        provider(`http://localhost:${port}/v1`, { apiKey: 'sk-test-secret-4242' }),
      );
      expect([withKey.status, withKey.body.apiKeySet]).toEqual([200, true]);

      const mcp = (url: string, extra: Record<string, unknown> = {}) => ({
        description: 'A remote MCP server',
        mcpTransportType: 'SH',
        mcpConnectionUrl: url,
        ...extra,
      });
      const mcpMoved = await parley.call(
        'PUT',
        '/api/v1/catalog/mcp-clients/remote',
        mcp('https://other.example.com/mcp'),
      );
      expect(problemsOf(mcpMoved)).toEqual([400, 'VALIDATION_FAILED', ['headers']]);
      const mcpOffList = await parley.call(
        'PUT',
        '/api/v1/catalog/mcp-clients/remote',
        mcp('https://evil.test/mcp', { headers: null }),
      );
      expect(problemsOf(mcpOffList)).toEqual([400, 'VALIDATION_FAILED', ['mcpConnectionUrl']]);
      const cleared = await parley.call(
        'PUT',
        '/api/v1/catalog/mcp-clients/remote',
        mcp('https://other.example.com/mcp', { headers: null }),
      );
      expect([cleared.status, cleared.body.headersSet]).toEqual([200, []]);
    });
  });
});

import { registerCatalogCommands } from '@parley/catalog';
import { Command } from 'commander';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startParley, type ParleyUnderTest, natsCall } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const ALICE_SECRET = 'sk-alice-private-7788';

describe('self-service catalog: clients own providers and models, share them, and see what they may use', () => {
  let parley: ParleyUnderTest;
  let nc: NatsConnection;
  let alice: string;
  let bob: string;
  let auditor: string;
  let dir: string;

  const as = (key: string) => (method: string, path: string, body?: unknown) =>
    parley.call(method, path, body, bearer(key));
  let asAlice: ReturnType<typeof as>;
  let asBob: ReturnType<typeof as>;
  const errorOf = (res: { status: number; body: any }) => [res.status, res.body?.error?.code];
  const codes = (rows: { code: string }[]) => rows.map((r) => r.code).sort();
  const provider = (extra: Record<string, unknown> = {}) => ({
    code: 'ALI',
    description: 'Alice’s endpoint',
    providerType: 'openai-compatible',
    baseUrl: parley.simulator.url,
    apiKey: ALICE_SECRET,
    ...extra,
  });
  const model = (extra: Record<string, unknown> = {}) => ({
    code: 'ALI-CHAT',
    description: 'Alice’s chat model',
    llmModelName: 'sim-chat',
    llmProvider: 'ALI',
    modelType: 'inference',
    llmInputTokenPrice: 0.000001,
    llmOutputTokenPrice: 0.000002,
    capabilities: ['FC'],
    ...extra,
  });
  const natsQuery = (method: string, payload: unknown, key: string) =>
    natsCall(nc, parley, `qry.${method}`, payload, key);
  const rpc = async (method: string, params: unknown, key: string) => {
    const res = await fetch(`${parley.url}/rpc`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: any; error?: any };
  };

  beforeAll(async () => {
    // Clients' own providers may point at the simulator's host only (localhost, which
    // LLM_PROVIDER_ALLOWED_HOSTS allows, stays out).
    parley = await startParley(
      'catalog_self_service',
      { SELF_SERVICE_PROVIDER_ALLOWED_HOSTS: '127.0.0.1' },
      testCatalog,
    );
    nc = await connect({ servers: '127.0.0.1:4222' });
    const key = async (subject: string, roles: string[]) =>
      (await parley.call('POST', '/api/v1/keys', { subject, roles })).body.key as string;
    alice = await key('alice', ['client']);
    bob = await key('bob', ['client']);
    auditor = await key('audit-1', ['auditor']);
    asAlice = as(alice);
    asBob = as(bob);
    dir = await mkdtemp(join(tmpdir(), 'parley-catalog-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await nc?.close();
    await parley?.close();
  });

  it('lets a client create a provider and a model it owns, private, with the secret never shown', async () => {
    const created = await asAlice('POST', '/api/v1/catalog/providers', provider());
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ code: 'ALI', owner: 'alice', instanceWide: false, apiKeySet: true });
    const m = await asAlice('POST', '/api/v1/catalog/models', model());
    expect(m.status).toBe(201);
    expect(m.body).toMatchObject({ code: 'ALI-CHAT', owner: 'alice', instanceWide: false, llmProvider: 'ALI' });
    const own = await asAlice('GET', '/api/v1/catalog/providers/ALI');
    expect(own.body).toMatchObject({ baseUrl: parley.simulator.url, apiKeySet: true });
    expect(codes((await asAlice('GET', '/api/v1/catalog/models')).body)).toEqual(['ALI-CHAT', 'SIM-CHAT']);
    const available = await asAlice('GET', '/api/v1/models/available');
    expect(codes(available.body)).toEqual(['ALI-CHAT', 'SIM-CHAT']);
    const everything = JSON.stringify([created.body, own.body, available.body]);
    expect(everything).not.toContain(ALICE_SECRET);
    // An admin makes an action on Alice's model: only who may use the model may run it.
    const action = await parley.call('POST', '/api/v1/catalog/actions', {
      code: 'ALI_ACT',
      description: 'Runs on Alice’s model',
      llmModel: 'ALI-CHAT',
      llmConfiguration: 'TEST',
      llmMemoryStrategy: 'FULL',
    });
    expect(action.status).toBe(201);
    expect((await asAlice('GET', '/api/v1/actions/available')).body).toContainEqual({
      code: 'ALI_ACT',
      description: 'Runs on Alice’s model',
      model: 'ALI-CHAT',
    });
  });

  it('refuses a client’s own provider outside SELF_SERVICE_PROVIDER_ALLOWED_HOSTS, whoever writes it', async () => {
    const local = await asAlice(
      'POST',
      '/api/v1/catalog/providers',
      provider({ code: 'LOC', baseUrl: 'http://localhost:6379/v1' }),
    );
    expect(errorOf(local)).toEqual([400, 'VALIDATION_FAILED']);
    expect(local.body.error.details.problems).toEqual([
      { path: 'baseUrl', message: expect.stringContaining('SELF_SERVICE_PROVIDER_ALLOWED_HOSTS') },
    ]);
    expect((await asAlice('GET', '/api/v1/catalog/providers/LOC')).status).toBe(404);
    // An admin may still point an instance-wide provider there (LLM_PROVIDER_ALLOWED_HOSTS allows it) …
    const wide = await parley.call('POST', '/api/v1/catalog/providers', {
      ...provider({ code: 'LOCW', baseUrl: 'http://localhost:1/v1' }),
      instanceWide: true,
    });
    expect(wide.status).toBe(201);
    expect((await parley.call('DELETE', '/api/v1/catalog/providers/LOCW')).status).toBe(204);
    // … but a provider a client owns is held to the narrower list, whoever wrote it.
    const owned = await parley.call('POST', '/api/v1/catalog/providers', {
      ...provider({ code: 'LOCO', baseUrl: 'http://localhost:1/v1' }),
      owner: 'alice',
      instanceWide: false,
    });
    expect(errorOf(owned)).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('refuses a client every other collection, the bundle, instanceWide and another owner, writing nothing', async () => {
    const agent = { code: 'MINE', description: 'x', llmApplication: 'SUPPORT' };
    const action = { code: 'MINE', description: 'x', llmModel: 'ALI-CHAT' };
    for (const [path, body] of [
      ['/api/v1/catalog/agents', agent],
      ['/api/v1/catalog/actions', action],
      ['/api/v1/catalog/tools', { code: 'MINE', description: 'x', llmToolBeanName: 'orderStatus' }],
      ['/api/v1/catalog/mcp-clients', { name: 'mine', description: 'x', mcpTransportType: 'SH' }],
      ['/api/v1/catalog/apply', { models: [model({ code: 'VIA-APPLY' })] }],
    ] as const)
      expect([path, ...errorOf(await asAlice('POST', path, body))]).toEqual([path, 403, 'FORBIDDEN']);
    expect(errorOf(await asAlice('PUT', '/api/v1/catalog/actions/CHAT', { description: 'x' }))).toEqual([
      403,
      'FORBIDDEN',
    ]);
    expect(errorOf(await asAlice('DELETE', '/api/v1/catalog/actions/ALI_ACT'))).toEqual([403, 'FORBIDDEN']);

    const wide = await asAlice('POST', '/api/v1/catalog/models', model({ code: 'ALI-WIDE', instanceWide: true }));
    expect(errorOf(wide)).toEqual([403, 'FORBIDDEN']);
    expect(wide.body.error.message).toContain('instance-wide');
    const foreign = await asAlice('POST', '/api/v1/catalog/models', model({ code: 'ALI-BOB', owner: 'bob' }));
    expect(errorOf(foreign)).toEqual([403, 'FORBIDDEN']);
    const madeWide = await asAlice('PUT', '/api/v1/catalog/models/ALI-CHAT', model({ instanceWide: true }));
    expect(errorOf(madeWide)).toEqual([403, 'FORBIDDEN']);
    for (const code of ['ALI-WIDE', 'ALI-BOB', 'VIA-APPLY', 'MINE'])
      expect((await parley.call('GET', `/api/v1/catalog/models/${code}`)).status).toBe(404);
    expect((await parley.call('GET', '/api/v1/catalog/agents/MINE')).status).toBe(404);
    expect((await parley.call('GET', '/api/v1/catalog/models/ALI-CHAT')).body.instanceWide).toBe(false);
    // Auditors read; they do not write.
    expect((await parley.call('GET', '/api/v1/catalog/models/ALI-CHAT', undefined, bearer(auditor))).status).toBe(200);
    const audited = await parley.call('POST', '/api/v1/catalog/models', model({ code: 'AUD' }), bearer(auditor));
    expect(errorOf(audited)).toEqual([403, 'FORBIDDEN']);
  });

  it('hides a private model and provider from another client: read, change, delete and share are NOT_FOUND', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/v1/catalog/models/ALI-CHAT'],
      ['GET', '/api/v1/catalog/providers/ALI'],
      ['PUT', '/api/v1/catalog/models/ALI-CHAT', model({ description: 'mine now' })],
      ['DELETE', '/api/v1/catalog/models/ALI-CHAT'],
      ['PUT', '/api/v1/catalog/providers/ALI', provider({ description: 'mine now' })],
      ['DELETE', '/api/v1/catalog/providers/ALI'],
      ['GET', '/api/v1/catalog/models/ALI-CHAT/acl'],
      ['PUT', '/api/v1/catalog/models/ALI-CHAT/acl/bob', { permission: 'manage' }],
      ['DELETE', '/api/v1/catalog/models/ALI-CHAT/acl/bob'],
    ] as const) {
      const res = await asBob(method, path, body);
      expect([method, path, ...errorOf(res)]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    // The same answer as for a model that does not exist.
    const unknown = await asBob('GET', '/api/v1/catalog/models/NO-SUCH');
    const hidden = await asBob('GET', '/api/v1/catalog/models/ALI-CHAT');
    expect(hidden.body.error.message).toBe(unknown.body.error.message.replace('NO-SUCH', 'ALI-CHAT'));
    expect(codes((await asBob('GET', '/api/v1/catalog/models')).body)).toEqual(['SIM-CHAT']);
    expect(codes((await asBob('GET', '/api/v1/models/available')).body)).toEqual(['SIM-CHAT']);
    expect(codes((await asBob('GET', '/api/v1/providers/available')).body)).toEqual(['SIM']);
    expect(codes((await asBob('GET', '/api/v1/actions/available')).body)).not.toContain('ALI_ACT');
    expect((await parley.call('GET', '/api/v1/catalog/models/ALI-CHAT')).body.description).toBe('Alice’s chat model');
  });

  it('refuses a client’s model on a provider it may not use as it refuses an unknown provider', async () => {
    const onAlices = await asBob('POST', '/api/v1/catalog/models', model({ code: 'BOB-CHAT' }));
    const onNothing = await asBob('POST', '/api/v1/catalog/models', model({ code: 'BOB-CHAT', llmProvider: 'NOPE' }));
    expect(errorOf(onAlices)).toEqual([400, 'VALIDATION_FAILED']);
    expect(onAlices.body.error.details.problems).toEqual([
      { path: 'llmProvider', message: "no provider 'ALI' this caller may use" },
    ]);
    expect(errorOf(onNothing)).toEqual([400, 'VALIDATION_FAILED']);
    expect((await parley.call('GET', '/api/v1/catalog/models/BOB-CHAT')).status).toBe(404);
    // On an instance-wide provider it may.
    const onShared = await asBob('POST', '/api/v1/catalog/models', model({ code: 'BOB-CHAT', llmProvider: 'SIM' }));
    expect(onShared.status).toBe(201);
    expect(onShared.body).toMatchObject({ owner: 'bob', llmProvider: 'SIM' });
  });

  it('gives a grant and takes it back: models, providers and actions available, and the conversation', async () => {
    const started = () =>
      asBob('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ALI_ACT' }).then(errorOf);
    expect(await started()).toEqual([403, 'FORBIDDEN']);

    expect((await asAlice('PUT', '/api/v1/catalog/models/ALI-CHAT/acl/bob', { permission: 'read' })).status).toBe(200);
    // The model alone is not enough: its provider is Alice's too.
    expect(codes((await asBob('GET', '/api/v1/models/available')).body)).toEqual(['BOB-CHAT', 'SIM-CHAT']);
    const acl = await asAlice('PUT', '/api/v1/catalog/providers/ALI/acl/bob', { permission: 'read' });
    expect(acl.body).toEqual([{ grantee: 'bob', permission: 'read' }]);

    const models = (await asBob('GET', '/api/v1/models/available')).body as Record<string, unknown>[];
    expect(codes(models as { code: string }[])).toEqual(['ALI-CHAT', 'BOB-CHAT', 'SIM-CHAT']);
    // What Bob sees of Alice's: enough to use it; not her address, her key's flag or her name.
    const alis = models.find((m) => m.code === 'ALI-CHAT')!;
    expect(alis).toMatchObject({ llmProvider: 'ALI', modelType: 'inference', status: 'active' });
    expect(alis).not.toHaveProperty('owner');
    const providers = (await asBob('GET', '/api/v1/providers/available')).body;
    expect(providers).toContainEqual({
      code: 'ALI',
      description: 'Alice’s endpoint',
      providerType: 'openai-compatible',
      status: 'active',
      instanceWide: false,
    });
    expect(JSON.stringify([models, providers])).not.toMatch(/apiKeySet|baseUrl|alice-private/);
    expect((await natsQuery('getAvailableModels', {}, bob)).result).toEqual(models);
    expect((await rpc('getAvailableProviders', {}, bob)).result).toEqual(providers);
    expect((await natsQuery('getAvailableActions', {}, bob)).result).toContainEqual(
      expect.objectContaining({ code: 'ALI_ACT' }),
    );

    const conversation = await asBob('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ALI_ACT' });
    expect(conversation.status).toBe(201);
    const turn = await asBob('POST', `/api/v1/conversations/${conversation.body.conversationId}/messages`, {
      content: 'hello',
      timeoutMs: 10_000,
    });
    expect(turn.body.status).toBe('CO');
    const call = parley.simulator.requests.at(-1)!;
    expect(call.headers.authorization).toBe(`Bearer ${ALICE_SECRET}`);

    expect((await asAlice('DELETE', '/api/v1/catalog/models/ALI-CHAT/acl/bob')).status).toBe(204);
    expect(codes((await asBob('GET', '/api/v1/models/available')).body)).toEqual(['BOB-CHAT', 'SIM-CHAT']);
    expect(codes((await asBob('GET', '/api/v1/actions/available')).body)).not.toContain('ALI_ACT');
    expect(errorOf(await asBob('GET', '/api/v1/catalog/models/ALI-CHAT'))).toEqual([404, 'NOT_FOUND']);
    expect(await started()).toEqual([403, 'FORBIDDEN']);
    expect(errorOf(await asAlice('DELETE', '/api/v1/catalog/models/ALI-CHAT/acl/bob'))).toEqual([404, 'NOT_FOUND']);
  });

  it('lets a read grantee use but not change, delete or share; a manage grantee change but not widen', async () => {
    // Bob may read ALI (the provider), not manage it.
    expect(errorOf(await asBob('PUT', '/api/v1/catalog/providers/ALI', provider({ description: 'x' })))).toEqual([
      403,
      'FORBIDDEN',
    ]);
    expect(errorOf(await asBob('DELETE', '/api/v1/catalog/providers/ALI'))).toEqual([403, 'FORBIDDEN']);
    expect(errorOf(await asBob('PUT', '/api/v1/catalog/providers/ALI/acl/carol', { permission: 'read' }))).toEqual([
      403,
      'FORBIDDEN',
    ]);
    expect(errorOf(await asBob('GET', '/api/v1/catalog/providers/ALI/acl'))).toEqual([403, 'FORBIDDEN']);
    // Only admins share with a role (every client at once).
    expect(
      errorOf(await asAlice('PUT', '/api/v1/catalog/providers/ALI/acl/role:client', { permission: 'read' })),
    ).toEqual([403, 'FORBIDDEN']);
    expect((await asAlice('GET', '/api/v1/catalog/providers/ALI/acl')).body).toEqual([
      { grantee: 'bob', permission: 'read' },
    ]);

    await asAlice('PUT', '/api/v1/catalog/models/ALI-CHAT/acl/bob', { permission: 'manage' });
    const changed = await asBob('PUT', '/api/v1/catalog/models/ALI-CHAT', model({ description: 'Shared by Alice' }));
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ description: 'Shared by Alice', owner: 'alice', instanceWide: false });
    const widened = await asBob('PUT', '/api/v1/catalog/models/ALI-CHAT', model({ instanceWide: true }));
    expect(errorOf(widened)).toEqual([403, 'FORBIDDEN']);
    const taken = await asBob('PUT', '/api/v1/catalog/models/ALI-CHAT', model({ owner: 'bob' }));
    expect(errorOf(taken)).toEqual([403, 'FORBIDDEN']);
    expect((await parley.call('GET', '/api/v1/catalog/models/ALI-CHAT')).body).toMatchObject({
      description: 'Shared by Alice',
      owner: 'alice',
      instanceWide: false,
    });
    // An admin makes it instance-wide; its owner's next update keeps that.
    const admin = await parley.call(
      'PUT',
      '/api/v1/catalog/models/ALI-CHAT',
      model({ instanceWide: true, owner: 'alice' }),
    );
    expect(admin.body).toMatchObject({ instanceWide: true, owner: 'alice' });
    const kept = await asAlice('PUT', '/api/v1/catalog/models/ALI-CHAT', model({ description: 'Everyone’s' }));
    expect(kept.body).toMatchObject({ instanceWide: true, owner: 'alice', description: 'Everyone’s' });
  });

  it('lists only active models of the asked type on active providers', async () => {
    await asBob(
      'POST',
      '/api/v1/catalog/models',
      model({ code: 'BOB-EMBED', llmProvider: 'SIM', modelType: 'embedding' }),
    );
    expect(codes((await asBob('GET', '/api/v1/models/available?modelType=embedding')).body)).toEqual(['BOB-EMBED']);
    expect((await asBob('GET', '/api/v1/models/available?modelType=chat')).status).toBe(400);
    const off = await asBob(
      'PUT',
      '/api/v1/catalog/models/BOB-CHAT',
      model({ code: 'BOB-CHAT', llmProvider: 'SIM', status: 'inactive' }),
    );
    expect(off.status).toBe(200);
    expect(codes((await asBob('GET', '/api/v1/models/available')).body)).not.toContain('BOB-CHAT');
    // A client's own provider made inactive takes its models out.
    await asAlice('PUT', '/api/v1/catalog/providers/ALI', provider({ status: 'inactive', apiKey: undefined }));
    expect(codes((await asAlice('GET', '/api/v1/providers/available')).body)).toEqual(['SIM']);
    expect(codes((await asAlice('GET', '/api/v1/models/available')).body)).toEqual(['SIM-CHAT']);
    expect(codes((await asAlice('GET', '/api/v1/actions/available')).body)).not.toContain('ALI_ACT');
    await asAlice('PUT', '/api/v1/catalog/providers/ALI', provider({ apiKey: undefined }));
  });

  it('parley catalog: create, share, acl, available, unshare and delete as the caller of the key', async () => {
    const cli = async (key: string, ...args: string[]) => {
      const out: string[] = [];
      const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        out.push(String(chunk));
        return true;
      });
      const program = new Command('parley').exitOverride();
      registerCatalogCommands(program);
      try {
        await program.parseAsync(['catalog', ...args, '--url', parley.url, '--api-key', key], { from: 'user' });
        return { ok: true, out: out.join('') };
      } catch (err) {
        return { ok: false, out: (err as Error).message };
      } finally {
        write.mockRestore();
      }
    };
    const file = join(dir, 'model.yaml');
    await writeFile(
      file,
      'code: CLI-CHAT\ndescription: From the CLI\nllmModelName: sim-chat\nllmProvider: SIM\nmodelType: inference\n',
    );
    const created = await cli(alice, 'create', 'models', file);
    expect(created.ok).toBe(true);
    expect(JSON.parse(created.out)).toMatchObject({ code: 'CLI-CHAT', owner: 'alice', instanceWide: false });
    expect(await cli(alice, 'share', 'models', 'CLI-CHAT', 'bob')).toEqual({
      ok: true,
      out: 'shared models/CLI-CHAT with bob (read)\n',
    });
    expect(await cli(alice, 'acl', 'models', 'CLI-CHAT')).toEqual({ ok: true, out: 'bob\tread\n' });
    expect((await cli(bob, 'available', 'models')).out).toMatch(/^CLI-CHAT\tFrom the CLI\tsim-chat\tactive$/m);
    const refused = await cli(bob, 'delete', 'models', 'CLI-CHAT');
    expect(refused).toEqual({ ok: false, out: expect.stringMatching(/^FORBIDDEN: /) });
    const agent = await cli(bob, 'create', 'agents', file);
    expect(agent.out).toMatch(/^FORBIDDEN: /);
    expect(await cli(alice, 'unshare', 'models', 'CLI-CHAT', 'bob')).toMatchObject({ ok: true });
    expect((await cli(bob, 'get', 'models', 'CLI-CHAT')).out).toMatch(/^NOT_FOUND: /);
    expect(await cli(alice, 'delete', 'models', 'CLI-CHAT')).toEqual({ ok: true, out: 'deleted models/CLI-CHAT\n' });
    expect((await parley.call('GET', '/api/v1/catalog/models/CLI-CHAT')).status).toBe(404);
  });

  it('lets a client delete only its own', async () => {
    expect(errorOf(await asBob('DELETE', '/api/v1/catalog/providers/SIM'))).toEqual([403, 'FORBIDDEN']);
    expect(errorOf(await asBob('DELETE', '/api/v1/catalog/models/SIM-CHAT'))).toEqual([403, 'FORBIDDEN']);
    expect((await asBob('DELETE', '/api/v1/catalog/models/BOB-EMBED')).status).toBe(204);
    expect((await parley.call('GET', '/api/v1/catalog/models/BOB-EMBED')).status).toBe(404);
    expect((await parley.call('GET', '/api/v1/catalog/models/SIM-CHAT')).status).toBe(200);
  });
});

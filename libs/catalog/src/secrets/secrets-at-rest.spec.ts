import { type DomainError } from '@parley/core';
import { CatalogService } from '../apply/catalog.service';
import { OTHER_KEY, TEST_KEY, openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { CatalogMcpClientConfigSource } from '../runtime/mcp-client-config-source';
import { ProviderCredentials } from '../runtime/provider-credentials';
import { CatalogToolConfigSource } from '../runtime/tool-config-source';
import { CatalogReader } from '../store/catalog-reader';
import { rotateEncryptionKeys } from './rotate-keys';
import { keyIdOf, parseKey } from './secret-cipher';

const CRM_TOOL = {
  code: 'CRM_LOOKUP',
  description: 'Finds a customer',
  config: {
    kind: 'http',
    url: 'https://crm.example.com/lookup',
    request: { auth: 'basic', basic: { username: 'parley', password: 'pw-PLAINTEXT' } },
    schema: [
      { parameter: 'email', type: 'string' },
      { parameter: 'tenant', type: 'string', ignore: true, value: 'acme' },
    ],
  },
};

const bundle = {
  providers: [
    {
      code: 'OAI',
      providerType: 'openai',
      apiKey: 'sk-openai-PLAINTEXT',
      providerConfig: { headers: { 'OpenAI-Organization': 'org-PLAINTEXT' } },
    },
    { code: 'PRXY', providerType: 'openai-compatible', baseUrl: 'https://proxy.example.com/v1?sig=sig-PLAINTEXT' },
  ],
  tools: [
    CRM_TOOL,
    {
      code: 'KEYED',
      description: 'Calls an API with a static key in a header and a token in its URL',
      config: {
        kind: 'http',
        url: 'https://api.example.com/v1/find?token=tok-PLAINTEXT',
        headers: { 'x-api-key': 'key-PLAINTEXT', 'x.dotted': 'dot-PLAINTEXT' },
      },
    },
  ],
  mcpClients: [
    {
      name: 'remote',
      mcpTransportType: 'SH',
      mcpConnectionUrl: 'https://mcp.example.com/mcp?token=url-PLAINTEXT',
      headers: { Authorization: 'Bearer tok-PLAINTEXT' },
    },
  ],
};

describe('catalog secrets at rest', () => {
  let t: CatalogTestDb;
  const rawRows = async () =>
    JSON.stringify(
      await t.dataSource.query(
        `select row_to_json(p)::text as p from cat_providers p
         union all select row_to_json(x)::text from cat_tools x
         union all select row_to_json(m)::text from cat_mcp_clients m`,
      ),
    );

  beforeAll(async () => {
    t = await openCatalogDb('catalog_secrets');
    await new CatalogService(t.dataSource, testCipher()).apply(bundle, { dryRun: false });
  });
  afterAll(() => t.close());

  it('stores no secret in plaintext (raw SQL over every column)', async () => {
    const raw = await rawRows();
    expect(raw).not.toContain('PLAINTEXT');
    expect(raw).toContain('crm.example.com');
    const [row] = await t.dataSource.query(
      `select secret_key_id, secret_ciphertext from cat_providers where code = 'OAI'`,
    );
    expect(row.secret_key_id).toBe(keyIdOf(parseKey(TEST_KEY)));
    expect(row.secret_ciphertext.length).toBeGreaterThan(20);
  });

  it('decrypts at call time for the LLM adapter, the tool executors and the MCP pool', async () => {
    const reader = new CatalogReader(t.dataSource, testCipher());
    expect(await new ProviderCredentials(reader).endpointFor('OAI')).toEqual({
      code: 'OAI',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-openai-PLAINTEXT',
      headers: { 'OpenAI-Organization': 'org-PLAINTEXT' },
    });
    const tool = await new CatalogToolConfigSource(reader).configFor('CRM_LOOKUP');
    expect(tool).toMatchObject({
      kind: 'http',
      headers: {},
      request: { basic: { username: 'parley', password: 'pw-PLAINTEXT' } },
    });
    expect(await new CatalogMcpClientConfigSource(reader).configFor('remote')).toEqual({
      name: 'remote',
      transport: 'SH',
      url: 'https://mcp.example.com/mcp?token=url-PLAINTEXT',
      headers: { Authorization: 'Bearer tok-PLAINTEXT' },
    });
    expect((await new ProviderCredentials(reader).endpointFor('PRXY')).baseUrl).toBe(
      'https://proxy.example.com/v1?sig=sig-PLAINTEXT',
    );
  });

  it('shows flags instead of secrets and keeps a tool password an update leaves out', async () => {
    const catalog = new CatalogService(t.dataSource, testCipher());
    const shown = await catalog.get('tools', 'CRM_LOOKUP');
    expect(shown.secretsSet).toEqual(['request.basic.password']);
    expect(JSON.stringify(shown)).not.toContain('PLAINTEXT');
    const withoutPassword = structuredClone(CRM_TOOL);
    delete (withoutPassword.config.request.basic as Partial<typeof withoutPassword.config.request.basic>).password;
    const result = await catalog.apply({ tools: [withoutPassword] }, { dryRun: false });
    expect(result.changes.tools.unchanged).toEqual(['CRM_LOOKUP']);
    const again = await new CatalogToolConfigSource(new CatalogReader(t.dataSource, testCipher())).configFor(
      'CRM_LOOKUP',
    );
    expect(again).toMatchObject({ request: { basic: { password: 'pw-PLAINTEXT' } } });
  });

  it('stores header values and a URL’s query as secrets, keeps them across an update that leaves them out, and drops them when the URL moves', async () => {
    const catalog = new CatalogService(t.dataSource, testCipher());
    const shown = await catalog.get('tools', 'KEYED');
    expect(JSON.stringify(shown)).not.toContain('PLAINTEXT');
    expect(shown.config).toMatchObject({ url: 'https://api.example.com/v1/find' });
    expect(shown.config).not.toHaveProperty('headers');
    expect(shown.secretsSet).toEqual(['headers.x-api-key', 'headers.x.dotted', 'url']);
    const source = () => new CatalogToolConfigSource(new CatalogReader(t.dataSource, testCipher()));
    const full = {
      url: 'https://api.example.com/v1/find?token=tok-PLAINTEXT',
      headers: { 'x-api-key': 'key-PLAINTEXT', 'x.dotted': 'dot-PLAINTEXT' },
    };
    expect(await source().configFor('KEYED')).toMatchObject(full);

    const { secretsSet: _flags, ...view } = shown;
    const reapplied = await catalog.apply({ tools: [view] }, { dryRun: false });
    expect(reapplied.changes.tools.unchanged).toEqual(['KEYED']);
    expect(await source().configFor('KEYED')).toMatchObject(full);

    const moved = {
      code: 'KEYED',
      description: 'x',
      config: { kind: 'http', url: 'https://evil.example.net/v1/find' },
    };
    const error = (await catalog.apply({ tools: [moved] }, { dryRun: false }).catch((e: unknown) => e)) as DomainError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.details!.problems).toEqual([
      { path: 'tools[0].config.headers.x-api-key', message: expect.stringContaining('give this secret again') },
      { path: 'tools[0].config.headers.x.dotted', message: expect.stringContaining('give this secret again') },
    ]);
    expect(await source().configFor('KEYED')).toMatchObject(full);
  });

  it('shows a provider’s and an MCP client’s URL without its query, and keeps the secret one when the shown URL is applied again', async () => {
    const catalog = new CatalogService(t.dataSource, testCipher());
    const proxy = await catalog.get('providers', 'PRXY');
    const remote = await catalog.get('mcp-clients', 'remote');
    expect(proxy).toMatchObject({ baseUrl: 'https://proxy.example.com/v1', baseUrlSecretSet: true });
    expect(remote).toMatchObject({ mcpConnectionUrl: 'https://mcp.example.com/mcp', mcpConnectionUrlSecretSet: true });
    const reapplied = await catalog.apply(
      {
        providers: [{ code: 'PRXY', providerType: 'openai-compatible', baseUrl: proxy.baseUrl }],
        mcpClients: [{ name: 'remote', mcpTransportType: 'SH', mcpConnectionUrl: remote.mcpConnectionUrl }],
      },
      { dryRun: false },
    );
    expect([reapplied.changes.providers.unchanged, reapplied.changes.mcpClients.unchanged]).toEqual([
      ['PRXY'],
      ['remote'],
    ]);
    const reader = new CatalogReader(t.dataSource, testCipher());
    expect((await new ProviderCredentials(reader).endpointFor('PRXY')).baseUrl).toContain('sig-PLAINTEXT');
    expect((await new CatalogMcpClientConfigSource(reader).configFor('remote')).url).toContain('url-PLAINTEXT');
  });

  it('refuses to store a secret without an encryption key and writes nothing', async () => {
    const keyless = new CatalogService(t.dataSource, testCipher(null));
    const error = (await keyless
      .apply({ providers: [{ code: 'NEW', providerType: 'openai', apiKey: 'sk-new' }] }, { dryRun: false })
      .catch((e: unknown) => e)) as DomainError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.details!.problems).toEqual([
      { path: 'providers[0].apiKey', message: expect.stringContaining('PARLEY_ENCRYPTION_KEY') },
    ]);
    expect(await t.dataSource.query(`select code from cat_providers where code = 'NEW'`)).toEqual([]);
  });

  it('re-encrypts everything under the current key on rotation', async () => {
    const rotated = await rotateEncryptionKeys(t.dataSource, testCipher(OTHER_KEY, [TEST_KEY]));
    expect(rotated).toEqual({ cat_tools: 2, cat_mcp_clients: 1, cat_providers: 2 });
    const ids = await t.dataSource.query(
      `select secret_key_id from cat_providers union select secret_key_id from cat_tools union select secret_key_id from cat_mcp_clients`,
    );
    expect(ids).toEqual([{ secret_key_id: keyIdOf(parseKey(OTHER_KEY)) }]);
    const onlyNewKey = new CatalogReader(t.dataSource, testCipher(OTHER_KEY));
    expect((await new ProviderCredentials(onlyNewKey).endpointFor('OAI')).apiKey).toBe('sk-openai-PLAINTEXT');
    expect(await rotateEncryptionKeys(t.dataSource, testCipher(OTHER_KEY, [TEST_KEY]))).toEqual({
      cat_tools: 0,
      cat_mcp_clients: 0,
      cat_providers: 0,
    });
    expect(await rawRows()).not.toContain('PLAINTEXT');
  });
});

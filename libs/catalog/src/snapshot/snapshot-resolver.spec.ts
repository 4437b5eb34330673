import { loadConfig } from '@parley/config';
import { type DomainError } from '@parley/core';
import { CatalogAccess } from '../access/catalog-access';
import { CatalogService } from '../apply/catalog.service';
import { exampleBundle, openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { ProviderCredentials } from '../runtime/provider-credentials';
import { CatalogReader } from '../store/catalog-reader';
import { SnapshotResolver } from './snapshot-resolver';

const ADMIN = { subject: 'root', roles: ['admin'] };
const API_KEY = 'sk-live-DO-NOT-LEAK-4242';

describe('SnapshotResolver', () => {
  let t: CatalogTestDb;
  let resolver: SnapshotResolver;
  let reader: CatalogReader;
  const config = loadConfig({ PARLEY_ENCRYPTION_KEY: 'a'.repeat(64), TURN_TIMEOUT_MS: '90000' });

  beforeAll(async () => {
    t = await openCatalogDb('catalog_snapshot');
    const bundle = exampleBundle();
    (bundle.providers[0] as Record<string, unknown>).apiKey = API_KEY;
    await new CatalogService(t.dataSource, testCipher()).apply(bundle, { dryRun: false });
    reader = new CatalogReader(t.dataSource, testCipher());
    resolver = new SnapshotResolver(reader, config, new CatalogAccess(t.dataSource, reader));
  });
  afterAll(() => t.close());

  it('assembles the prompt of agent and action in the seed order', async () => {
    const snapshot = await resolver.resolve('HELPDESK', 'ANSWER');
    expect(snapshot.systemPrompt).toBe(
      [
        "You are ACME's support assistant.",
        'You answer customer questions.',
        'Your skill: look up orders before answering questions about them.',
        "Skill available on request 'REFUNDS': Refund rules and how to start a refund.",
        "Available tool 'everything': Demo tools (echo, add, long-running operations)",
        'Answer briefly. Ask the customer when the order number is missing.',
      ].join('\n\n'),
    );
    expect(snapshot).toMatchObject({
      applicationCode: 'SUPPORT',
      agentCode: 'HELPDESK',
      actionCode: 'ANSWER',
      model: { code: 'SIM-CHAT', name: 'sim-chat', providerCode: 'SIM', capabilities: ['FC', 'SR', 'JM'] },
      options: { maxTokens: 512, temperature: 0.2 },
      memory: { kind: 'FULL' },
      retry: { count: 3, delayMs: 500 },
      mcpClients: ['everything'],
      limits: { maxToolRounds: 10, turnTimeoutMs: 90_000, maxPromptTokens: null },
    });
  });

  it('defines the tools the model may call, and keeps on-request skills aside', async () => {
    const snapshot = await resolver.resolve('HELPDESK', 'ANSWER');
    expect(snapshot.tools.map((tool) => [tool.name, tool.kind, tool.ref])).toEqual([
      ['ORDER_STATUS', 'in_process', 'ORDER_STATUS'],
      ['use_skill_REFUNDS', 'skill', 'REFUNDS'],
      ['AskUserQuestion', 'ask_user_question', 'AskUserQuestion'],
    ]);
    expect(snapshot.tools[0]).toMatchObject({
      idempotent: true,
      approval: 'never',
      parameters: { type: 'object', required: ['orderId'] },
    });
    expect(snapshot.disclosableSkills).toEqual([
      {
        code: 'REFUNDS',
        description: 'Refund rules and how to start a refund',
        prompt: 'Explain the refund policy and collect what a refund needs.',
        tools: [],
      },
    ]);
  });

  it('selects structured output and the configuration limits for an action with an output schema', async () => {
    const snapshot = await resolver.resolve('TRIAGE', 'TICKET');
    expect(snapshot.options).toMatchObject({
      maxTokens: 1024,
      temperature: 0,
      responseFormat: { type: 'json_schema', name: 'TICKET', strict: false },
    });
    expect(snapshot.systemPrompt).toContain('Output data structure:\nTICKET (a single item)');
    // The final reply is validated against what the model was asked for (structured output).
    expect(snapshot.outputSchema).toEqual({
      code: 'TICKET',
      jsonSchema: (snapshot.options.responseFormat as { schema: Record<string, unknown> }).schema,
      unwrap: null,
    });
    expect(
      snapshot.systemPrompt.endsWith(
        'Never invent data that is not in the input.\n\nFill in the ticket from the conversation.',
      ),
    ).toBe(true);
    expect(snapshot.limits.maxToolRounds).toBe(4);
    expect(snapshot.memory).toEqual({ kind: 'NONE' });
    expect(snapshot.tools.map((tool) => tool.name)).toEqual(['AskUserQuestion']);
  });

  it('never contains a key, while the credentials source hands it to the LLM adapter', async () => {
    const snapshot = await resolver.resolve('HELPDESK', 'ANSWER');
    expect(JSON.stringify(snapshot)).not.toContain(API_KEY);
    expect(JSON.stringify(snapshot)).not.toContain('sk-');
    const endpoint = await new ProviderCredentials(reader).endpointFor('SIM');
    expect(endpoint).toEqual({ code: 'SIM', baseUrl: 'http://127.0.0.1:4010/v1', apiKey: API_KEY });
  });

  it('is the same for the same catalog, and immutable', async () => {
    const [a, b] = [await resolver.resolve('HELPDESK', 'ANSWER'), await resolver.resolve('HELPDESK', 'ANSWER')];
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(Object.isFrozen(a.tools[0].parameters)).toBe(true);
  });

  it('names a missing agent or action', async () => {
    const agent = (await resolver.resolve('NOBODY', 'ANSWER').catch((e: unknown) => e)) as DomainError;
    expect([agent.code, agent.message]).toEqual(['NOT_FOUND', "Agent 'NOBODY' was not found."]);
    const action = (await resolver.resolve('HELPDESK', 'NOTHING').catch((e: unknown) => e)) as DomainError;
    expect([action.code, action.details]).toEqual(['NOT_FOUND', { action: 'NOTHING' }]);
  });

  it('resolves catalog tool codes into definitions for a tool repository, naming unknown codes', async () => {
    const [tool] = await resolver.resolveTools(['ORDER_STATUS'], ADMIN);
    expect(tool).toMatchObject({ name: 'ORDER_STATUS', kind: 'in_process', ref: 'ORDER_STATUS', idempotent: true });
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['orderId'] });
    const error = (await resolver
      .resolveTools(['ORDER_STATUS', 'NOPE', 'NADA'], ADMIN)
      .catch((e: unknown) => e)) as DomainError;
    expect([error.code, error.details]).toEqual(['NOT_FOUND', { tools: ['NOPE', 'NADA'] }]);
  });

  it('gives an action with long-term memory the remember and recall tools and its embedding model', async () => {
    const service = new CatalogService(t.dataSource, testCipher());
    const action = { code: 'LTM', description: 'Remembers', llmModel: 'SIM-CHAT', longTermMemory: true };
    const refused = (await service
      .apply({ actions: [action] }, { dryRun: false })
      .catch((e: unknown) => e)) as DomainError;
    expect(refused.code).toBe('VALIDATION_FAILED');
    expect(refused.details).toEqual({
      problems: [{ path: 'actions[0].longTermMemory', message: expect.stringContaining('the catalog has none') }],
    });
    const embedding = {
      code: 'SIM-EMBED',
      description: 'Embeddings',
      llmModelName: 'sim-embed',
      llmProvider: 'SIM',
      modelType: 'embedding',
      llmInputTokenPrice: 0.0000001,
    };
    await service.apply({ models: [embedding], actions: [{ ...action, autoRecall: true }] }, { dryRun: false });
    try {
      const snapshot = await resolver.resolve('HELPDESK', 'LTM');
      expect(snapshot.tools.map((tool) => [tool.name, tool.kind, tool.idempotent])).toEqual([
        ['AskUserQuestion', 'ask_user_question', false],
        ['remember', 'memory', true],
        ['recall', 'memory', true],
      ]);
      expect(snapshot.longTermMemory).toEqual({
        tools: true,
        autoRecall: true,
        embedding: { code: 'SIM-EMBED', name: 'sim-embed', providerCode: 'SIM', inputTokenPrice: 0.0000001 },
      });
      expect((await resolver.resolve('HELPDESK', 'CHAT')).longTermMemory).toBeUndefined();
      const named = loadConfig({ PARLEY_ENCRYPTION_KEY: 'a'.repeat(64), MEMORY_EMBEDDING_MODEL: 'NOPE' });
      const error = (await new SnapshotResolver(reader, named, new CatalogAccess(t.dataSource, reader))
        .resolve('HELPDESK', 'LTM')
        .catch((e: unknown) => e)) as DomainError;
      expect([error.code, error.details]).toEqual([
        'VALIDATION_FAILED',
        {
          problems: [{ path: 'actions.LTM', message: expect.stringContaining("MEMORY_EMBEDDING_MODEL names 'NOPE'") }],
        },
      ]);
    } finally {
      await service.remove('actions', 'LTM');
      await service.remove('models', 'SIM-EMBED');
    }
  });

  it('offers AskUserQuestion to every action unless the action opts out', async () => {
    const service = new CatalogService(t.dataSource, testCipher());
    await service.apply(
      { actions: [{ code: 'QUIET', description: 'Never asks', llmModel: 'SIM-CHAT', askUserQuestion: false }] },
      { dryRun: false },
    );
    try {
      expect((await resolver.resolve('HELPDESK', 'QUIET')).tools).toEqual([]);
      expect((await resolver.resolve('HELPDESK', 'CHAT')).tools.map((tool) => tool.name)).toContain('AskUserQuestion');
    } finally {
      await service.remove('actions', 'QUIET');
    }
  });

  it("freezes the action's collections (top-K, threshold) and the model's context window; without them, neither", async () => {
    const plain = await resolver.resolve('HELPDESK', 'ANSWER');
    expect(plain).not.toHaveProperty('collections');
    expect(plain.model).not.toHaveProperty('contextWindow');
    await new CatalogService(t.dataSource, testCipher()).apply(
      {
        models: [
          { code: 'EMB', llmModelName: 'sim-embed', llmProvider: 'SIM', modelType: 'embedding' },
          {
            code: 'SIM-WIDE',
            llmModelName: 'sim-chat',
            llmProvider: 'SIM',
            capabilities: ['FC'],
            llmContextWindow: 8192,
          },
        ],
        vectorStores: [{ code: 'KB', llmEmbeddingModel: 'EMB' }],
        documentCollections: [
          { code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.4, llmResultCount: 6 },
          { code: 'MANUALS', llmVectorStore: 'KB', collectionName: 'manuals' },
        ],
        actions: [{ code: 'RAG', llmModel: 'SIM-WIDE', documents: ['MANUALS', 'FAQ'] }],
      },
      { dryRun: false },
    );
    const snapshot = await resolver.resolve('HELPDESK', 'RAG');
    expect(snapshot.collections).toEqual([
      { code: 'MANUALS', topK: 4, threshold: null },
      { code: 'FAQ', topK: 6, threshold: 0.4 },
    ]);
    expect(snapshot.model.contextWindow).toBe(8192);
  });

  it('refuses an action whose model is inactive', async () => {
    await t.dataSource.query(`update cat_models set status = 'inactive' where code = 'SIM-CHAT'`);
    try {
      const error = (await resolver.resolve('HELPDESK', 'CHAT').catch((e: unknown) => e)) as DomainError;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.message).toContain("model 'SIM-CHAT' is inactive");
    } finally {
      await t.dataSource.query(`update cat_models set status = 'active' where code = 'SIM-CHAT'`);
    }
  });

  it('lets a client start only on a model and provider it owns, that are instance-wide, or shared with it', async () => {
    const access = new CatalogAccess(t.dataSource, reader);
    const bob = { subject: 'bob', roles: ['client'] };
    await t.dataSource.query(`update cat_models set owner = 'alice', instance_wide = false where code = 'SIM-CHAT'`);
    try {
      const refused = (await resolver.resolve('HELPDESK', 'CHAT', bob).catch((e: unknown) => e)) as DomainError;
      expect([refused.code, refused.details]).toEqual(['FORBIDDEN', { model: 'SIM-CHAT' }]);
      await expect(resolver.resolve('HELPDESK', 'CHAT', { subject: 'alice', roles: ['client'] })).resolves.toBeTruthy();
      await expect(resolver.resolve('HELPDESK', 'CHAT', { subject: 'root', roles: ['admin'] })).resolves.toBeTruthy();
      await access.share('models', 'SIM-CHAT', 'role:client', { permission: 'read' });
      await expect(resolver.resolve('HELPDESK', 'CHAT', bob)).resolves.toBeTruthy();
      await access.unshare('models', 'SIM-CHAT', 'role:client');
      await expect(resolver.resolve('HELPDESK', 'CHAT', bob)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    } finally {
      await t.dataSource.query(`update cat_models set owner = null, instance_wide = true where code = 'SIM-CHAT'`);
    }
  });
});

describe('SnapshotResolver, an action that names no model', () => {
  let t: CatalogTestDb;
  const resolverWith = (env: Record<string, string>) => {
    const reader = new CatalogReader(t.dataSource, testCipher());
    const config = loadConfig({ PARLEY_ENCRYPTION_KEY: 'a'.repeat(64), ...env });
    return new SnapshotResolver(reader, config, new CatalogAccess(t.dataSource, reader));
  };

  beforeAll(async () => {
    t = await openCatalogDb('catalog_default_model');
    const bundle = exampleBundle() as Record<string, Record<string, unknown>[]>;
    bundle.actions.push({ code: 'NOMODEL', description: 'Names no model', llmMemoryStrategy: 'FULL' });
    await new CatalogService(t.dataSource, testCipher()).apply(bundle, { dryRun: false });
  });
  afterAll(() => t.close());

  it("runs on the catalog's model DEFAULT_MODEL_NAME names", async () => {
    const snapshot = await resolverWith({ DEFAULT_MODEL_NAME: 'sim-chat' }).resolve('HELPDESK', 'NOMODEL');
    expect(snapshot.model).toMatchObject({ code: 'SIM-CHAT', name: 'sim-chat' });
  });

  it('cannot run without a default, or when no catalog model has that name, and says why', async () => {
    for (const env of [{}, { DEFAULT_MODEL_NAME: 'no-such-model' }] as Record<string, string>[]) {
      const err = (await resolverWith(env)
        .resolve('HELPDESK', 'NOMODEL')
        .catch((e: unknown) => e)) as DomainError;
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(err.message).toMatch(
        /names no model, and no default model is set \(LLM_RUNTIME_URL\) or named in the catalog/,
      );
    }
  });
});

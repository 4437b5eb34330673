import { DomainError } from '@parley/core';
import { stringify } from 'yaml';
import { exampleBundle, openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { CatalogService } from './catalog.service';

describe('catalog apply', () => {
  let t: CatalogTestDb;
  let catalog: CatalogService;
  const count = async (table: string) =>
    Number((await t.dataSource.query(`select count(*)::int as n from ${table}`))[0].n);

  beforeAll(async () => {
    t = await openCatalogDb('catalog_apply');
    catalog = new CatalogService(t.dataSource, testCipher());
  });
  afterAll(() => t.close());

  it('writes nothing on a dry run and reports what it would create', async () => {
    const result = await catalog.apply(exampleBundle(), { dryRun: true });
    expect(result.dryRun).toBe(true);
    expect(result.changes.actions).toEqual({ created: ['CHAT', 'ANSWER', 'TICKET'], updated: [], unchanged: [] });
    expect(await count('cat_actions')).toBe(0);
    expect(await count('cat_providers')).toBe(0);
  });

  it('applies the example bundle, then applying it again changes nothing', async () => {
    const first = await catalog.apply(stringify(exampleBundle()), { dryRun: false });
    expect(first.changes.agents.created).toEqual(['HELPDESK', 'TRIAGE']);
    expect(await count('cat_action_skills')).toBe(2);
    const second = await catalog.apply(exampleBundle(), { dryRun: false });
    for (const [kind, diff] of Object.entries(second.changes)) {
      expect({ kind, created: diff.created, updated: diff.updated }).toEqual({ kind, created: [], updated: [] });
    }
    expect(second.changes.tools.unchanged).toEqual(['ORDER_STATUS']);
  });

  it('reports an update of one field and stores it', async () => {
    const bundle = exampleBundle();
    (bundle.personas[0] as Record<string, unknown>).llmPersonaPrompt = 'Be warm.';
    const dry = await catalog.apply(bundle, { dryRun: true });
    expect(dry.changes.personas).toEqual({ created: [], updated: ['EDITOR'], unchanged: [] });
    expect((await catalog.get('personas', 'EDITOR')).llmPersonaPrompt).toBe('Write like a calm, concise editor.');
    await catalog.apply(bundle, { dryRun: false });
    expect((await catalog.get('personas', 'EDITOR')).llmPersonaPrompt).toBe('Be warm.');
  });

  it('returns link lists and never a secret', async () => {
    const action = await catalog.get('actions', 'ANSWER');
    expect(action.skills).toEqual([
      { skill: 'ORDERS', disclosure: 'always' },
      { skill: 'REFUNDS', disclosure: 'on_request' },
    ]);
    expect(action.mcpClients).toEqual(['everything']);
    const provider = await catalog.get('providers', 'SIM');
    expect(provider).toMatchObject({ code: 'SIM', apiKeySet: true, providerConfigSet: false });
    expect(JSON.stringify(await catalog.list('providers'))).not.toContain('sk-local');
  });

  it('refuses a bad bundle, names every problem, and writes nothing', async () => {
    const before = await count('cat_actions');
    const bundle = {
      domainSchemas: [
        { code: 'BROKEN', jsonSchema: { type: 'strin' } },
        { code: 'OTHER', jsonSchema: { type: 'object' } },
      ],
      personas: [{ code: 'WAY_TOO_LONG_CODE', llmPersonaPrompt: 'x', llmPersonaType: 'NOPE' }],
      applications: [{ code: 'NEWAPP', description: 'New', colour: 'blue' }],
      actions: [
        { code: 'NEW1', llmModel: 'SIM-CHAT' },
        { code: 'NEW2', llmModel: 'SIM-CHAT' },
        {
          code: 'NEW3',
          llmModel: 'X',
          schemas: [{ domainSchema: 'OTHER', llmInputOutput: 'O', domainForm: 'TICKET_FORM' }],
        },
      ],
    };
    const error = await catalog.apply(bundle, { dryRun: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    const problems = (error as DomainError).details!.problems as { path: string; message: string }[];
    const lines = problems.map((p) => `${p.path}: ${p.message}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^domainSchemas\[0\]\.jsonSchema\.type: not a valid JSON Schema/),
        'personas[0].code: key too long: at most 8 characters',
        "personas[0].llmPersonaType: unknown persona type 'NOPE'",
        'applications[0].colour: unknown field',
        "actions[2].llmModel: unknown model 'X'",
        "actions[2].schemas[0].domainForm: 'TICKET_FORM' belongs to schema 'TICKET', not 'OTHER'",
      ]),
    );
    expect(await count('cat_actions')).toBe(before);
    expect(await count('cat_domain_schemas')).toBe(2);
    expect(await count('cat_applications')).toBe(1);
  });

  it('names an unknown entity list and a duplicate key', async () => {
    const error = (await catalog
      .apply({ gadgets: [], agentTypes: [{ code: 'A' }, { code: 'A' }] }, { dryRun: true })
      .catch((e: unknown) => e)) as DomainError;
    const paths = (error.details!.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(['gadgets', 'agentTypes[1].code']);
  });

  it('reports malformed YAML as a validation problem', async () => {
    const error = (await catalog.apply('actions: [ {code: ', { dryRun: true }).catch((e: unknown) => e)) as DomainError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect((error.details!.problems as { path: string }[])[0].path).toBe('(bundle)');
  });
});

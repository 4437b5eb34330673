import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { DEV_PRINCIPAL } from '@parley/auth';
import { ConfigModule, loadConfig } from '@parley/config';
import { DatabaseModule } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { HttpErrorFilter } from '@parley/transport';
import { readFileSync } from 'node:fs';
import { CatalogModule } from '../catalog.module';
import { examplePath, TEST_KEY } from '../catalog.test-kit';
import { CATALOG_ENTITIES } from '../model/entity-schemas';

describe('catalog over HTTP', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, contentType?: string) =>
    app
      .getHttpAdapter()
      .getInstance()
      .inject({
        method,
        url,
        ...(body === undefined
          ? {}
          : contentType
            ? { payload: body as string, headers: { 'content-type': contentType } }
            : { payload: body as object }),
      });

  beforeAll(async () => {
    db = await createTestDatabase('catalog_http');
    const config = loadConfig({ PARLEY_ENCRYPTION_KEY: TEST_KEY, DATABASE_URL: db.url });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot({ entities: CATALOG_ENTITIES }), CatalogModule],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
    app.useGlobalFilters(new HttpErrorFilter());
    // Without the AuthGuard: every request is the admin's, as the guard makes it with auth off.
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRequest', (request, _reply, done) => {
        (request as unknown as { principal: unknown }).principal = DEV_PRINCIPAL;
        done();
      });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  it('applies a YAML bundle: a dry run first, then for real', async () => {
    const yaml = readFileSync(examplePath, 'utf8');
    const dry = await call('POST', '/api/v1/catalog/apply?dryRun=true', yaml, 'application/yaml');
    expect(dry.statusCode).toBe(200);
    expect(dry.json().changes.agents.created).toEqual(['HELPDESK', 'TRIAGE']);
    expect((await call('GET', '/api/v1/catalog/agents')).json()).toEqual([]);
    const applied = await call('POST', '/api/v1/catalog/apply', yaml, 'text/yaml');
    expect(applied.json()).toMatchObject({
      dryRun: false,
      changes: { actions: { created: ['CHAT', 'ANSWER', 'TICKET'] } },
    });
  });

  it('creates, reads, updates and deletes an entity', async () => {
    const created = await call('POST', '/api/v1/catalog/personas', { code: 'PIRATE', llmPersonaPrompt: 'Arr.' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      code: 'PIRATE',
      description: null,
      llmPersonaType: null,
      llmPersonaPrompt: 'Arr.',
    });
    const updated = await call('PUT', '/api/v1/catalog/personas/PIRATE', { llmPersonaPrompt: 'Ahoy.' });
    expect(updated.json().llmPersonaPrompt).toBe('Ahoy.');
    expect((await call('GET', '/api/v1/catalog/personas/PIRATE')).json().llmPersonaPrompt).toBe('Ahoy.');
    expect((await call('DELETE', '/api/v1/catalog/personas/PIRATE')).statusCode).toBe(204);
    expect((await call('GET', '/api/v1/catalog/personas/PIRATE')).statusCode).toBe(404);
  });

  it('answers 404 for an unknown entity or collection', async () => {
    const missing = await call('GET', '/api/v1/catalog/actions/NOPE');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatchObject({ code: 'NOT_FOUND', details: { entity: 'actions', key: 'NOPE' } });
    expect((await call('GET', '/api/v1/catalog/gadgets')).statusCode).toBe(404);
    expect((await call('PUT', '/api/v1/catalog/personas/NOPE', { llmPersonaPrompt: 'x' })).statusCode).toBe(404);
  });

  it('answers 409 for a duplicate key and for deleting something in use', async () => {
    const duplicate = await call('POST', '/api/v1/catalog/agent-types', { code: 'AUTO' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().error.code).toBe('CONFLICT');
    const inUse = await call('DELETE', '/api/v1/catalog/providers/SIM');
    expect(inUse.statusCode).toBe(409);
    expect(inUse.json().error.message).toContain('cat_models');
  });

  it('answers 400 with a problem per field, relative to the body', async () => {
    const bad = await call('POST', '/api/v1/catalog/actions', {
      code: 'THIS_CODE_IS_TOO_LONG',
      llmModel: 'NOPE',
      llmPersona: 'GHOST',
      extra: 1,
    });
    expect(bad.statusCode).toBe(400);
    const problems = bad.json().error.details.problems as { path: string; message: string }[];
    expect(problems.map((p) => p.path).sort()).toEqual(['code', 'extra', 'llmModel', 'llmPersona']);
    const dangling = await call('POST', '/api/v1/catalog/actions', {
      code: 'NEWACT',
      llmModel: 'NOPE',
      llmPersona: 'GHOST',
    });
    expect(dangling.json().error.details.problems).toEqual([
      { path: 'llmModel', message: "unknown model 'NOPE'" },
      { path: 'llmPersona', message: "unknown persona 'GHOST'" },
    ]);
  });

  it('never returns a secret and keeps a write-only key when an update leaves it out', async () => {
    // Same origin: the stored key stays (another origin would need it again, see test/catalog-acl.e2e-spec.ts).
    const provider = await call('PUT', '/api/v1/catalog/providers/SIM', {
      providerType: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:4010/v2',
      instanceWide: true,
    });
    expect(provider.statusCode).toBe(200);
    expect(provider.json()).toMatchObject({ baseUrl: 'http://127.0.0.1:4010/v2', apiKeySet: true });
    expect(provider.body).not.toContain('sk-local');
    const listed = await call('GET', '/api/v1/catalog/providers');
    expect(listed.body).not.toContain('sk-local');
    const cleared = await call('PUT', '/api/v1/catalog/providers/SIM', {
      providerType: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:4011/v1',
      apiKey: null,
    });
    expect(cleared.json().apiKeySet).toBe(false);
  });

  it('shares a model through its ACL, lists and takes the share back; bad input changes nothing', async () => {
    const acl = '/api/v1/catalog/models/SIM-CHAT/acl';
    const shared = await call('PUT', `${acl}/role:support`, { permission: 'read' });
    expect(shared.statusCode).toBe(200);
    expect(shared.json()).toEqual([{ grantee: 'role:support', permission: 'read' }]);
    expect((await call('PUT', `${acl}/svc-billing`, { permission: 'manage' })).json()).toEqual([
      { grantee: 'role:support', permission: 'read' },
      { grantee: 'svc-billing', permission: 'manage' },
    ]);

    const badPermission = await call('PUT', `${acl}/bob`, { permission: 'own' });
    expect(badPermission.statusCode).toBe(400);
    expect(badPermission.json().error.details.problems).toEqual([
      { path: 'permission', message: 'expected read or manage' },
    ]);
    expect((await call('PUT', `${acl}/bad%20name`, { permission: 'read' })).statusCode).toBe(400);
    expect((await call('PUT', '/api/v1/catalog/models/NOPE/acl/bob', { permission: 'read' })).statusCode).toBe(404);
    expect((await call('PUT', '/api/v1/catalog/agents/HELPDESK/acl/bob', { permission: 'read' })).statusCode).toBe(400);
    expect((await call('DELETE', `${acl}/nobody`)).statusCode).toBe(404);
    expect((await call('GET', acl)).json()).toHaveLength(2);

    expect((await call('DELETE', `${acl}/svc-billing`)).statusCode).toBe(204);
    expect((await call('GET', acl)).json()).toEqual([{ grantee: 'role:support', permission: 'read' }]);
  });

  it('rejects a dryRun flag that is not a boolean', async () => {
    const bad = await call('POST', '/api/v1/catalog/apply?dryRun=maybe', {});
    expect(bad.statusCode).toBe(400);
  });
});

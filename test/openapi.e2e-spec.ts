import { sendMessageInput, startConversationInput } from '@parley/conversation';
import { byConversation } from '@parley/read-models';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

type Operation = {
  operationId: string;
  parameters: { name: string; in: string; required: boolean; schema: object }[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security?: unknown[];
};

const inputSchema = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  return rest;
};

describe('the OpenAPI document at /docs-json', () => {
  let parley: ParleyUnderTest;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, object> };
  };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
  const component = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];

  beforeAll(async () => {
    parley = await startParley('openapi_e2e');
    const res = await fetch(`${parley.url}/docs-json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as typeof doc;
  });
  afterAll(() => parley.close());

  it('is served without credentials, and describes request bodies with the schemas the routes validate with', () => {
    expect(doc.openapi).toBe('3.1.0');
    const send = doc.paths['/api/v1/conversations/{conversationId}/messages']!.post!;
    expect(component(send.requestBody!.content['application/json']!.schema.$ref)).toEqual(
      inputSchema(sendMessageInput.omit({ conversationId: true })),
    );
    const start = doc.paths['/api/v1/conversations']!.post!;
    expect(component(start.requestBody!.content['application/json']!.schema.$ref)).toEqual(
      inputSchema(startConversationInput),
    );
    const find = doc.paths['/api/v1/conversations/{conversationId}']!.get!;
    const { properties } = inputSchema(byConversation) as { properties: Record<string, object> };
    expect(find.parameters).toEqual([
      { name: 'conversationId', in: 'path', required: true, schema: properties.conversationId },
      { name: 'minPosition', in: 'query', required: false, schema: properties.minPosition },
    ]);
  });

  it('lists every route of the API: commands, queries, auditors, live, catalog, keys and operations', () => {
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/conversations',
        '/api/v1/conversations/{conversationId}/messages',
        '/api/v1/conversations/{conversationId}/answers',
        '/api/v1/conversations/{conversationId}/tool-calls/{toolCallId}/approve',
        '/api/v1/conversations/{conversationId}/tool-calls/{toolCallId}/reject',
        '/api/v1/conversations/{conversationId}/terminate',
        '/api/v1/conversations/{conversationId}/kill',
        '/api/v1/conversations/{conversationId}/pause',
        '/api/v1/conversations/{conversationId}/resume',
        '/api/v1/conversations/{conversationId}/recover',
        '/api/v1/actions',
        '/api/v1/actions/{code}',
        '/api/v1/agents/{code}',
        '/api/v1/tools/{code}',
        '/api/v1/mcp-clients/{name}',
        '/api/v1/conversations/{conversationId}',
        '/api/v1/conversations/{conversationId}/pending-question',
        '/api/v1/conversations/{conversationId}/events',
        '/api/v1/conversations/{conversationId}/state',
        '/api/v1/conversations/{conversationId}/verify',
        '/api/v1/events',
        '/api/v1/conversations/{conversationId}/stream',
        '/api/v1/catalog/apply',
        '/api/v1/catalog/{collection}/{key}',
        '/api/v1/catalog/{collection}/{key}/acl',
        '/api/v1/catalog/{collection}/{key}/acl/{grantee}',
        '/api/v1/collections/{code}',
        '/api/v1/collections/{code}/documents',
        '/api/v1/collections/{code}/documents/{id}',
        '/api/v1/keys',
        '/api/v1/keys/{id}',
        '/api/v1/memories',
        '/api/v1/memories/{memoryId}',
        '/health',
        '/health/ready',
        '/metrics',
        '/docs',
      ]),
    );
    expect(doc.paths['/api/v1/conversations']).toHaveProperty('get.operationId', 'listConversations');
    expect(doc.paths['/api/v1/conversations']).toHaveProperty('post.operationId', 'startConversation');
  });

  it("describes generate's failures as its statuses: 422, 502 and 504 with the error body", () => {
    const responses = doc.paths['/internal/llm/generate']!.post!.responses as Record<string, { description: string }>;
    expect(responses['422'].description).toMatch(/^LLM_LIMIT_EXCEEDED/);
    expect(responses['502'].description).toMatch(/^LLM_RUNTIME_ERROR/);
    expect(responses['504'].description).toMatch(/^LLM_RUNTIME_ERROR: the model timed out/);
    expect(doc.paths['/api/v1/conversations/{conversationId}/messages']!.post!.responses).not.toHaveProperty('502');
  });

  it('describes POST /rpc with the names of the command and query tables as its methods', () => {
    const rpc = doc.paths['/rpc']!.post!;
    expect(rpc.operationId).toBe('jsonRpc');
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(doc.components.schemas.JsonRpcRequest!);
    const call = { jsonrpc: '2.0', id: 1, method: 'findConversation', params: { conversationId: 'c' } };
    expect(validate(call)).toBe(true);
    expect(validate([call, { jsonrpc: '2.0', method: 'startConversation', params: {} }])).toBe(true);
    expect(validate({ ...call, method: 'mintApiKey' })).toBe(false);
    expect(validate([])).toBe(false);
    expect(Object.keys(rpc.responses)).toEqual(expect.arrayContaining(['200', '204', '400', '401']));
  });

  it('is a well-formed OpenAPI 3.1 document: unique operation ids, declared path parameters, compilable schemas', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      expect(() => ajv.compile(schema)).not.toThrow(`schema ${name}`);
    for (const { path, op } of operations()) {
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const inPath = op.parameters.filter((p) => p.in === 'path');
      expect(inPath.map((p) => p.name).sort()).toEqual(templated.sort());
      expect(inPath.every((p) => p.required)).toBe(true);
      for (const p of op.parameters) ajv.compile(p.schema);
      const refs = [
        ...Object.values(op.requestBody?.content ?? {}).map((c) => c.schema.$ref),
        ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {}).map((c) => c.schema.$ref)),
      ].filter((r): r is string => r !== undefined);
      for (const ref of refs) expect(component(ref)).toBeDefined();
    }
    const validate = ajv.compile(doc.components.schemas.SendMessageRequest!);
    expect(validate({ content: 'hello', wait: false })).toBe(true);
    expect(validate({ content: 'hello', colour: 'red' })).toBe(false);
  });

  it('documents only routes the server mounts, and requires credentials exactly where the server does', async () => {
    const sample: Record<string, string> = {
      conversationId: '00000000-0000-4000-8000-000000000001',
      collection: 'agents',
    };
    const unknown = await fetch(`${parley.url}/api/v1/not-a-route`);
    expect(unknown.status).toBe(404);
    for (const { path, method, op } of operations()) {
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => sample[name] ?? 'X1');
      const res = await fetch(parley.url + url, { method: method.toUpperCase(), signal: AbortSignal.timeout(5000) });
      await res.body?.cancel();
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${isPublic ? 200 : 401}`);
    }
  });

  it('serves Swagger UI at /docs, pointed at the document, with every script allowed by its CSP', async () => {
    const page = await fetch(`${parley.url}/docs`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    const html = await page.text();
    // The CSP allows no inline script: every script of the page is a same-origin file that loads.
    const scripts = [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBe(2);
    for (const [, attributes, body] of scripts) {
      expect(body.trim()).toBe('');
      const src = /src="(\/docs\/[^"]+)"/.exec(attributes)?.[1];
      expect(src).toBeDefined();
      const file = await fetch(`${parley.url}${src}`);
      expect([src, file.status, file.headers.get('content-type')]).toEqual([
        src,
        200,
        'application/javascript; charset=utf-8',
      ]);
    }
    for (const [tag, path] of [...html.matchAll(/<link[^>]*href="(\/docs\/[^"]+)"/g)])
      expect([tag, (await fetch(`${parley.url}${path}`)).status]).toEqual([tag, 200]);
    const init = await (await fetch(`${parley.url}/docs/swagger-init.js`)).text();
    expect(init).toContain("url: '/docs-json'");
    const bundle = await fetch(`${parley.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const other = await fetch(`${parley.url}/docs/..%2Fpackage.json`);
    expect(other.status).toBe(404);
  });

  it('keeps the credential typed into /docs in the page only: nothing persists it to localStorage', async () => {
    const init = await (await fetch(`${parley.url}/docs/swagger-init.js`)).text();
    expect(init).toContain('persistAuthorization: false');
    expect(init).not.toContain('persistAuthorization: true');
    expect(init).toContain("localStorage.removeItem('authorized')");
  });

  it('sends security headers on every response: API, errors and /docs', async () => {
    for (const [path, status] of [
      ['/health', 200],
      ['/api/v1/actions', 200],
      ['/api/v1/nope', 404],
      ['/docs', 200],
    ] as const) {
      const res = await fetch(`${parley.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect([path, res.status]).toEqual([path, status]);
      expect({
        path,
        nosniff: res.headers.get('x-content-type-options'),
        frame: res.headers.get('x-frame-options'),
        hsts: res.headers.get('strict-transport-security'),
        referrer: res.headers.get('referrer-policy'),
        csp: res.headers.get('content-security-policy')?.includes("frame-ancestors 'self'"),
      }).toEqual({
        path,
        nosniff: 'nosniff',
        frame: 'SAMEORIGIN',
        hsts: expect.stringContaining('max-age='),
        referrer: 'no-referrer',
        csp: true,
      });
    }
  });
});

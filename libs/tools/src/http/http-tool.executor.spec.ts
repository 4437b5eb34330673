import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { json, RecordingHttpServer } from '../testing/recording-http-server';
import { callContext, toolDef, toolsTestApp, type FakeCatalog } from '../testing/tools-test-app';
import type { HttpToolConfig } from '../tool-config';
import { httpToolConfigSchema } from '../tool-config';
import { ToolExecutor } from '../tool-executor';

const open = { type: 'object' };
let tokensIssued = 0;

describe('HTTP tools against a real HTTP server', () => {
  let server: RecordingHttpServer;
  let elsewhere: RecordingHttpServer;
  let app: INestApplicationContext;
  let catalog: FakeCatalog;
  let executor: ToolExecutor;

  const configure = (code: string, config: Record<string, unknown>) =>
    catalog.tools.set(code, httpToolConfigSchema.parse({ kind: 'http', ...config }) as HttpToolConfig);
  const run = (code: string, args: unknown, overrides = {}) =>
    executor.execute(
      toolDef({ name: code.toLowerCase(), kind: 'http', ref: code, parameters: open }),
      JSON.stringify(args),
      callContext(overrides),
    );

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    server = await new RecordingHttpServer()
      .route('/echo', (req, res) => json(res, 200, { method: req.method, query: req.query, body: req.body }))
      .route('/token', (_req, res) => {
        tokensIssued++;
        json(res, 200, { access_token: `tok-${tokensIssued}`, token_type: 'Bearer', expires_in: 3600 });
      })
      .route('/protected', (req, res) =>
        req.headers.authorization === 'Bearer tok-1'
          ? json(res, 401, { error: 'revoked' })
          : json(res, 200, { ok: true }),
      )
      .route('/big', (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(10_000)))
      .route('/fail', (_req, res) => json(res, 503, { error: 'maintenance' }))
      .route('/hop', (_req, res) => res.writeHead(302, { location: '/echo' }).end())
      .route('/escape', (_req, res) =>
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
      )
      .route('/away', (_req, res) => res.writeHead(307, { location: elsewhere.url('/landing') }).end())
      .start();
    elsewhere = await new RecordingHttpServer().route('/landing', (_req, res) => json(res, 200, {})).start();
    ({ app, catalog } = await toolsTestApp({
      env: { TOOL_HTTP_ALLOWED_HOSTS: `127.0.0.1:${server.port},127.0.0.1:${elsewhere.port}` },
    }));
    executor = app.get(ToolExecutor);
  });

  afterAll(async () => {
    await app.close();
    await server.stop();
    await elsewhere.stop();
  });

  beforeEach(() => {
    server.requests.length = 0;
  });

  it('POSTs the tool-matching details when no request is configured', async () => {
    configure('DEFAULT', { url: server.url('/echo'), schema: [{ parameter: 'day', type: 'string' }] });
    const outcome = await run('DEFAULT', { day: 'monday' }, { repositoryId: 'appointments' });
    expect(outcome.ok).toBe(true);
    const [request] = server.requestsTo('/echo');
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({
      appId: 'SUPPORT',
      sessionId: 'c-1',
      repositoryId: 'appointments',
      source: 'agent',
      name: 'default',
      schema: [{ parameter: 'day', type: 'string', ignore: false }],
      values: { day: 'monday' },
    });
  });

  it('sends GET parameters as a query string, with static values and without ignored ones', async () => {
    configure('GET', {
      url: server.url('/echo'),
      method: 'GET',
      request: { auth: 'none' },
      schema: [
        { parameter: 'city', type: 'string' },
        { parameter: 'units', type: 'string', value: 'metric' },
        { parameter: 'secret', type: 'string', ignore: true },
      ],
    });
    const outcome = await run('GET', { city: 'Oslo', units: 'imperial', secret: 'from-model' });
    expect(server.requestsTo('/echo')[0].query).toEqual({ city: 'Oslo', units: 'metric' });
    expect(outcome.ok && JSON.parse(outcome.output).method).toBe('GET');
    expect(outcome.ok && outcome.output).toContain('\n  "method": "GET"');
  });

  it('sends other methods a JSON body, with basic auth and the configured headers', async () => {
    configure('PUT', {
      url: server.url('/echo'),
      method: 'PUT',
      headers: { 'X-Tenant': 'acme' },
      request: { auth: 'basic', basic: { username: 'parley', password: 's3cret' } },
    });
    await run('PUT', { quantity: 2, note: { gift: true } });
    const [request] = server.requestsTo('/echo');
    expect(request.method).toBe('PUT');
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('parley:s3cret').toString('base64')}`);
    expect(request.headers['x-tenant']).toBe('acme');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ quantity: 2, note: { gift: true } });
  });

  it('fetches a client_credentials token once, reuses it, and sends it as a bearer', async () => {
    tokensIssued = 0;
    const bearer = {
      clientType: 'client_credentials',
      clientId: 'app',
      clientSecret: 'shh',
      audience: 'tools',
      tokenUrl: server.url('/token'),
    };
    configure('BEARER', { url: server.url('/echo'), request: { auth: 'bearer', bearer } });
    await run('BEARER', {});
    await run('BEARER', {});
    const tokenCalls = server.requestsTo('/token');
    expect(tokenCalls).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(tokenCalls[0].body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'app',
      client_secret: 'shh',
      audience: 'tools',
    });
    expect(server.requestsTo('/echo').map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1']);
  });

  it('fetches a password-grant token, and a new one when the endpoint answers 401', async () => {
    tokensIssued = 0;
    const bearer = { clientType: 'password', username: 'ana', password: 'pw', tokenUrl: server.url('/token') };
    configure('PASSWORD', { url: server.url('/protected'), request: { auth: 'bearer', bearer } });
    const outcome = await run('PASSWORD', {});
    expect(outcome).toMatchObject({ ok: true });
    expect(Object.fromEntries(new URLSearchParams(server.requestsTo('/token')[0].body))).toEqual({
      grant_type: 'password',
      username: 'ana',
      password: 'pw',
    });
    expect(server.requestsTo('/protected').map((r) => r.headers.authorization)).toEqual([
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
  });

  it('cuts a body over the size limit and marks it', async () => {
    configure('BIG', { url: server.url('/big'), method: 'GET', request: { auth: 'none' } });
    const outcome = await run('BIG', {}, { maxOutputBytes: 1_000 });
    expect(outcome).toMatchObject({ ok: true, truncated: true });
    expect(outcome.ok && outcome.output).toBe(`${'x'.repeat(1_000)}\n…[truncated: 10000 bytes total]`);
  });

  it('reports a non-2xx answer as a TOOL_ERROR with its status and body', async () => {
    configure('FAIL', { url: server.url('/fail') });
    expect(await run('FAIL', {})).toMatchObject({
      ok: false,
      error: { code: 'TOOL_ERROR', message: `HTTP 503 from 127.0.0.1:${server.port}: {"error":"maintenance"}` },
    });
  });

  it('follows a redirect within the allowed hosts', async () => {
    configure('HOP', { url: server.url('/hop'), method: 'GET', request: { auth: 'none' } });
    expect(await run('HOP', {})).toMatchObject({ ok: true });
    expect(server.requestsTo('/echo')).toHaveLength(1);
  });

  it('drops the credentials and configured headers on a redirect to another origin', async () => {
    configure('AWAY', {
      url: server.url('/away'),
      method: 'PUT',
      headers: { 'X-Api-Key': 'k-123', 'X-Tenant': 'acme' },
      request: { auth: 'basic', basic: { username: 'parley', password: 's3cret' } },
    });
    expect(await run('AWAY', { n: 1 })).toMatchObject({ ok: true });
    const [first] = server.requestsTo('/away');
    expect(first.headers['x-api-key']).toBe('k-123');
    const [landed] = elsewhere.requestsTo('/landing');
    expect(landed.headers['x-api-key']).toBeUndefined();
    expect(landed.headers['x-tenant']).toBeUndefined();
    expect(landed.headers.authorization).toBeUndefined();
    expect(landed.headers['content-type']).toBe('application/json');
    expect(JSON.parse(landed.body)).toEqual({ n: 1 });
  });

  it('refuses a redirect to a host that is not allowed', async () => {
    configure('ESCAPE', { url: server.url('/escape') });
    const outcome = await run('ESCAPE', {});
    expect(outcome).toMatchObject({ ok: false, error: { code: 'NOT_ALLOWED' } });
    expect(!outcome.ok && outcome.error.message).toContain('169.254.169.254:80');
  });

  it('refuses a host that is not allowed without sending anything', async () => {
    configure('OTHER', { url: `http://localhost:${server.port}/echo` });
    const outcome = await run('OTHER', {});
    expect(outcome).toMatchObject({ ok: false, error: { code: 'NOT_ALLOWED' } });
    expect(!outcome.ok && outcome.error.message).toContain(`localhost:${server.port}`);
    expect(server.requests).toHaveLength(0);
  });
});

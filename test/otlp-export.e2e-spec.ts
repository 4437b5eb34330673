import {
  createTestDatabase,
  freePort,
  startSimulator,
  waitForHttp,
  type Simulator,
  type TestDatabase,
} from '@parley/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { ADMIN_KEY, callerOf } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

type Attribute = { key: string; value: { stringValue?: string; intValue?: string | number } };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Attribute[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: Attribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const bodyOf = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req.on('data', (d) => (text += String(d)));
    req.on('end', () => resolve(text));
  });

/**
 * OTEL_EXPORTER_OTLP_ENDPOINT end to end: the server as `npm start` runs it (its own process,
 * the OTLP/HTTP exporter loaded as in production) sends the spans of a turn to a collector
 * stand-in on loopback, flushing them when it stops on SIGTERM.
 */
describe('traces exported over OTLP/HTTP by a running server', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  let collector: Server;
  let child: ChildProcess | undefined;
  let output = '';
  const posts: { path: string; contentType: string; body: string }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('otlp_export');
    simulator = await startSimulator({ rules: [{ reply: { text: 'Traced.' } }] });
    collector = createServer((req, res) => {
      void bodyOf(req).then((body) => {
        posts.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    collector.closeAllConnections();
    await new Promise((r) => collector.close(r));
    await simulator.close();
    await db.drop();
  });

  it('sends one trace from the HTTP request through the command, the turn and the model call', async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/server/src/main.ts'], {
      cwd: join(__dirname, '..'),
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
        PARLEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        PARLEY_ADMIN_API_KEY: ADMIN_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as { port: number }).port}`,
        OTEL_SERVICE_NAME: 'parley-otlp-e2e',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => (output += String(c)));
    child.stderr?.on('data', (c: Buffer) => (output += String(c)));
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/health`, child, () => output, 35_000);
    const post = (path: string, body: unknown) => callerOf(url)('POST', path, body);
    expect((await post('/api/v1/catalog/apply', testCatalog(simulator.url))).status).toBe(200);
    const id = (await post('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body.conversationId;
    const sent = await post(`/api/v1/conversations/${id}/messages`, { content: 'trace me' });
    expect(sent.body).toMatchObject({ status: 'CO', reply: 'Traced.' });

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);

    expect(posts.length).toBeGreaterThan(0);
    expect(new Set(posts.map((p) => `${p.path} ${p.contentType}`))).toEqual(new Set(['/v1/traces application/json']));
    const exported = posts.map((p) => JSON.parse(p.body) as OtlpExport).flatMap((e) => e.resourceSpans);
    expect(exported[0].resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'parley-otlp-e2e' },
    });
    const spans = exported.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const request = spans.find((s) => s.name === 'POST /api/v1/conversations/:id/messages')!;
    const command = spans.find((s) => s.name === 'parley.command' && s.traceId === request.traceId)!;
    const turn = spans.find((s) => s.name === 'parley.turn' && s.traceId === request.traceId)!;
    const modelCall = spans.find((s) => s.name === 'parley.model_call' && s.traceId === request.traceId)!;
    expect(command.parentSpanId).toBe(request.spanId);
    expect(turn).toBeDefined();
    expect(modelCall.parentSpanId).toBe(turn.spanId);
    expect(command.attributes).toContainEqual({ key: 'parley.conversation_id', value: { stringValue: id } });
  }, 60_000);
});

import { Controller, Get, Param, Post, Body } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import { currentTraceId } from '../context/request-context';
import { instrumentHttp } from '../http/http-instrumentation';
import { observeNatsRequest } from '../nats/nats-instrumentation';
import { ObservabilityModule } from '../observability.module';
import { MetricsService } from './metrics.service';

@Controller('things')
class ThingsController {
  @Get(':id')
  get(@Param('id') id: string) {
    return { id, traceId: currentTraceId() };
  }

  @Post()
  create(@Body() body: unknown) {
    return { body, traceId: currentTraceId() };
  }
}

describe('GET /metrics', () => {
  let app: NestFastifyApplication;
  let metrics: MetricsService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({ NODE_ENV: 'test' })), ObservabilityModule],
      controllers: [ThingsController],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    metrics = app.get(MetricsService);
    instrumentHttp(app.getHttpAdapter().getInstance(), metrics);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  it('exposes seed 004 metrics and the request, store, projection and queue metrics by name', async () => {
    metrics.recordLlmRequest({ provider: 'SIM', model: 'sim-chat', outcome: 'ok' }, 420);
    metrics.recordToolCall({ kind: 'mcp', outcome: 'ok' });
    metrics.recordTokenUsage('sim-chat', { input: 1180, output: 210 });
    metrics.recordMcpError({ client: 'everything', kind: 'connect' });
    metrics.recordEventStoreAppend(3);
    metrics.setProjectionLag('conversations', 125);
    metrics.registerQueueDepth('turns', async () => 7);
    await observeNatsRequest(metrics, { subject: 'parley.cmd.sendMessage' }, async () => 'ok');
    await expect(
      observeNatsRequest(metrics, { subject: 'parley.qry.findConversation' }, async () => {
        throw Object.assign(new Error('nope'), { code: 'NOT_FOUND' });
      }),
    ).rejects.toThrow('nope');

    const res = await app.inject({ method: 'GET', url: '/metrics' });

    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toContain('llm_requests_total{provider="SIM",model="sim-chat",outcome="ok"} 1');
    expect(text).toContain('llm_latency_ms_bucket{le="500",provider="SIM",model="sim-chat"} 1');
    expect(text).toContain('llm_tool_call_count{kind="mcp",outcome="ok"} 1');
    expect(text).toContain('llm_token_usage{model="sim-chat",direction="input"} 1180');
    expect(text).toContain('llm_token_usage{model="sim-chat",direction="output"} 210');
    expect(text).toContain('llm_mcp_errors_total{client="everything",kind="connect"} 1');
    expect(text).toContain('event_store_append_ms_count 1');
    expect(text).toContain('projection_lag_ms{projection="conversations"} 125');
    expect(text).toContain('queue_depth{queue="turns"} 7');
    expect(text).toContain('nats_requests_total{subject="parley.cmd.sendMessage",outcome="ok"} 1');
    expect(text).toContain('nats_requests_total{subject="parley.qry.findConversation",outcome="NOT_FOUND"} 1');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('labels HTTP requests by route pattern, never by the raw URL', async () => {
    await app.inject({ method: 'GET', url: '/things/conv-123' });
    await app.inject({ method: 'GET', url: '/things/conv-456' });
    await app.inject({ method: 'GET', url: '/nowhere/at/all' });

    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;

    expect(text).toContain('http_requests_total{method="GET",route="/things/:id",status="200"} 2');
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(/http_request_duration_ms_count\{method="GET",route="\/things\/:id",status="200"\} 2/);
    expect(text).not.toContain('conv-123');
  });

  it('gives each request a trace id, the caller’s when it sends one, kept across body parsing', async () => {
    const sent = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'x-trace-id': 'abc-def-123' },
      payload: { name: 'x' },
    });
    const fresh = await app.inject({ method: 'POST', url: '/things', payload: { name: 'y' } });

    expect(sent.json()).toMatchObject({ traceId: 'abc-def-123' });
    expect(sent.headers['x-trace-id']).toBe('abc-def-123');
    expect(fresh.json().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh.headers['x-trace-id']).toBe(fresh.json().traceId);
  });
});

import { Controller, Get } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { propagation } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { currentTraceId } from '../context/request-context';
import { instrumentHttp } from '../http/http-instrumentation';
import { MetricsService } from '../metrics/metrics.service';
import { startTracing, tracingEnabled, withSpan, type Tracing } from './tracing';

/** Stands in for HTTP → command → worker → model → tool. */
const runTurn = () =>
  withSpan('command SendMessage', { 'parley.command': 'SendMessage' }, () =>
    withSpan('worker turn', {}, async () => {
      await withSpan('llm chat', { 'llm.model': 'sim-chat' }, async () => undefined);
      await withSpan('tool get_weather', { 'tool.kind': 'http' }, async () => undefined);
      return currentTraceId();
    }),
  );

@Controller('turns')
class TurnsController {
  @Get()
  async run() {
    return { traceId: await runTurn() };
  }
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('tracing', () => {
  it('is a plain call when off: no spans, the function still runs', async () => {
    expect(tracingEnabled()).toBe(false);
    await expect(withSpan('x', {}, async () => 42)).resolves.toBe(42);
  });

  describe('when on', () => {
    const exporter = new InMemorySpanExporter();
    let tracing: Tracing | null;
    let app: NestFastifyApplication;

    beforeAll(async () => {
      tracing = await startTracing({ serviceName: 'parley-test', exporter });
      const moduleRef = await Test.createTestingModule({
        controllers: [TurnsController],
        providers: [MetricsService],
      }).compile();
      app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
      instrumentHttp(app.getHttpAdapter().getInstance(), app.get(MetricsService));
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
    });

    afterAll(async () => {
      await app.close();
      await tracing?.shutdown();
    });

    it('nests HTTP → command → worker → model and tool spans in one trace, the logs’ trace id', async () => {
      const res = await app.inject({ method: 'GET', url: '/turns' });
      const spans = exporter.getFinishedSpans();
      const byName = (name: string) => spans.find((s) => s.name === name) as ReadableSpan;

      const http = byName('GET /turns');
      const command = byName('command SendMessage');
      const worker = byName('worker turn');
      expect(http).toBeDefined();
      expect(parentOf(command)).toBe(http.spanContext().spanId);
      expect(parentOf(worker)).toBe(command.spanContext().spanId);
      expect(parentOf(byName('llm chat'))).toBe(worker.spanContext().spanId);
      expect(parentOf(byName('tool get_weather'))).toBe(worker.spanContext().spanId);
      expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
      expect(res.json().traceId).toBe(http.spanContext().traceId);
      expect(byName('llm chat').attributes['llm.model']).toBe('sim-chat');
    });

    it('marks a failing step as an error and rethrows', async () => {
      exporter.reset();
      await expect(
        withSpan('tool broken', {}, async () => {
          throw new Error('tool down');
        }),
      ).rejects.toThrow('tool down');
      const [span] = exporter.getFinishedSpans();
      expect(span.status.code).toBe(2);
      expect(span.status.message).toBe('tool down');
    });
  });

  it('leaves no global behind on shutdown, and starts again with spans nesting as before', async () => {
    await (await startTracing({ serviceName: 'first', exporter: new InMemorySpanExporter() }))?.shutdown();
    expect(propagation.fields()).toEqual([]);

    const exporter = new InMemorySpanExporter();
    const again = await startTracing({ serviceName: 'second', exporter });
    expect(propagation.fields()).toContain('traceparent');
    await withSpan('outer', {}, () => withSpan('inner', {}, async () => undefined));
    const [inner, outer] = exporter.getFinishedSpans();
    await again?.shutdown();
    expect(parentOf(inner)).toBe(outer.spanContext().spanId);
    expect(outer.resource.attributes['service.name']).toBe('second');
  });
});

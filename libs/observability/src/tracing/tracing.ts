import { context, propagation, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

const TRACER = 'parley';
let enabled = false;

export interface TracingOptions {
  serviceName: string;
  /** OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT); spans go to `<endpoint>/v1/traces`. */
  otlpEndpoint?: string | null;
  /** Tests pass an in-memory exporter instead of an endpoint. */
  exporter?: SpanExporter;
}

export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for the process (OpenTelemetry is global by design). The SDK is loaded only
 * here, so a process without an endpoint never loads it and `withSpan` stays a plain call.
 * SDK 3 has no Node provider that registers itself: the async-local-storage context (spans nest
 * across awaits) and the W3C propagators (`traceparent` in and out) are set here, and undone on
 * shutdown.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing | null> {
  if (!options.exporter && !options.otlpEndpoint) return null;
  const [
    { TracerProvider, BatchSpanProcessor, SimpleSpanProcessor },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
  ]);
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({ exporter: await otlpExporter(options.otlpEndpoint as string) });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  enabled = true;
  return {
    shutdown: async () => {
      enabled = false;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

async function otlpExporter(endpoint: string): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
}

export function tracingEnabled(): boolean {
  return enabled;
}

const noopSpan = trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 });

/**
 * Runs `fn` in a child span of the active one (HTTP request → command → worker → model → tool);
 * a failure marks the span as an error and is rethrown. When tracing is off it only calls `fn`.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  if (!enabled) return fn(noopSpan);
  return trace.getTracer(TRACER).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The trace id of the active span, when tracing is on and a span is active. */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

/** The active trace context as W3C headers, to carry it through a queued job (empty when off). */
export function traceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (enabled) propagation.inject(context.active(), carrier);
  return carrier;
}

/** Runs `fn` under the trace context a job carried, so its spans join the request's trace. */
export function withTraceCarrier<T>(carrier: Record<string, string> | undefined, fn: () => Promise<T>): Promise<T> {
  if (!enabled || !carrier) return fn();
  return context.with(propagation.extract(context.active(), carrier), fn);
}

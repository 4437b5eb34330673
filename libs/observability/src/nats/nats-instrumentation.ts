import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { runWithContext, traceIdFrom } from '../context/request-context';
import type { MetricsService } from '../metrics/metrics.service';
import { tracingEnabled } from '../tracing/tracing';

/** The part of a NATS message's headers this needs (nats.js MsgHdrs answers '' for a missing key). */
export interface HeaderReader {
  get(name: string): string;
}

/** What a failed handler reports as outcome: its domain error code when it has one. */
function outcomeOf(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^[A-Z_]{3,40}$/.test(code) ? code : 'error';
}

/**
 * Runs one NATS request handler with a trace context taken from its headers (`traceparent` or
 * `x-trace-id`), a server span when tracing is on, and nats_requests_total /
 * nats_request_duration_ms. `subject` must be the pattern (no conversation ids).
 */
export async function observeNatsRequest<T>(
  metrics: MetricsService,
  request: { subject: string; headers?: HeaderReader },
  handler: () => Promise<T>,
): Promise<T> {
  const header = (name: string) => request.headers?.get(name) || undefined;
  const started = performance.now();
  let outcome = 'ok';
  const run = async (traceId: string) =>
    runWithContext({ traceId }, async () => {
      try {
        return await handler();
      } catch (err) {
        outcome = outcomeOf(err);
        throw err;
      } finally {
        metrics.recordNatsRequest({ subject: request.subject, outcome }, performance.now() - started);
      }
    });
  if (!tracingEnabled()) return run(traceIdFrom(header));
  const carrier = { traceparent: header('traceparent'), tracestate: header('tracestate') };
  const parent = propagation.extract(context.active(), carrier);
  const span = trace.getTracer('parley').startSpan(`NATS ${request.subject}`, { kind: SpanKind.SERVER }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => run(span.spanContext().traceId));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    throw err;
  } finally {
    span.end();
  }
}

import { AsyncResource } from 'node:async_hooks';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runWithContext, traceIdFrom } from '../context/request-context';
import type { MetricsService } from '../metrics/metrics.service';
import { tracingEnabled } from '../tracing/tracing';

interface Instrumented {
  parleyScope?: AsyncResource;
  parleySpan?: Span;
}

const routeOf = (request: FastifyRequest) => request.routeOptions.url ?? 'unmatched';

/**
 * Gives every HTTP request a trace context (logs carry its trace_id, spans nest under it) and
 * records http_requests_total / http_request_duration_ms by route pattern, never by raw URL.
 */
export function instrumentHttp(fastify: FastifyInstance, metrics: MetricsService): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const header = (name: string) => {
      const v = request.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    let traceId = traceIdFrom(header);
    let otelContext = context.active();
    const req = request as FastifyRequest & Instrumented;
    if (tracingEnabled()) {
      const parent = propagation.extract(otelContext, request.headers);
      const span = trace.getTracer('parley').startSpan(
        `${request.method} ${routeOf(request)}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'http.route': routeOf(request) },
        },
        parent,
      );
      req.parleySpan = span;
      traceId = span.spanContext().traceId;
      otelContext = trace.setSpan(parent, span);
    }
    void reply.header('x-trace-id', traceId);
    context.with(otelContext, () =>
      runWithContext({ traceId }, () => {
        req.parleyScope = new AsyncResource('parley-request');
        done();
      }),
    );
  });

  // Body parsing runs on the socket's stream events and loses the async context; re-enter it.
  fastify.addHook('preValidation', (request, _reply, done) => {
    const scope = (request as FastifyRequest & Instrumented).parleyScope;
    if (scope) scope.runInAsyncScope(done);
    else done();
  });

  fastify.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request);
    metrics.recordHttpRequest({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime);
    const span = (request as FastifyRequest & Instrumented).parleySpan;
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What every log line and span of one HTTP request, NATS message or job shares. */
export interface RequestContext {
  traceId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and everything it awaits) inside `context`. */
export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentTraceId(): string | undefined {
  return storage.getStore()?.traceId;
}

/**
 * A W3C-compatible trace id: 32 hex characters, a random UUID's (122 random bits), which Node
 * draws from a pool of random bytes instead of a call into OpenSSL per request.
 */
export function newTraceId(): string {
  return randomUUID().replaceAll('-', '');
}

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;
const TRACE_ID = /^[\w-]{8,64}$/;

/**
 * The caller's trace id when it sent one (W3C `traceparent`, or `x-trace-id` as seed 004's
 * callers do), else a new one, so a caller can find its own request in Parley's logs.
 */
export function traceIdFrom(header: (name: string) => string | undefined): string {
  const parent = TRACEPARENT.exec(header('traceparent')?.trim().toLowerCase() ?? '');
  if (parent && !/^0+$/.test(parent[1])) return parent[1];
  const given = header('x-trace-id')?.trim();
  return given && TRACE_ID.test(given) ? given : newTraceId();
}

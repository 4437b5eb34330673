import type { DeferredRateLimit, Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { HttpRoute, Operation, OperationContext } from '@parley/conversation';
import type { FastifyRequest } from 'fastify';
import { MAX_IDEMPOTENCY_KEY_CHARS } from '../operations/payload';

export type OperationRequest = FastifyRequest & { principal: Principal } & DeferredRateLimit;

/**
 * The operation's one input from an HTTP request: the path parameters merged into the body
 * (post, put) or the query string (get, delete). A field given twice is refused rather than
 * silently overridden; the operation's schema then checks the whole.
 */
export function httpInput(route: HttpRoute, request: OperationRequest): Record<string, unknown> {
  const params = inputFieldsOf(route, (request.params ?? {}) as Record<string, string>);
  const carriesBody = route.method === 'post' || route.method === 'put';
  const rest: unknown = carriesBody ? request.body : request.query;
  if (rest !== undefined && rest !== null && (typeof rest !== 'object' || Array.isArray(rest)))
    throw DomainError.validation([{ path: '(body)', message: 'expected a JSON object' }]);
  const fields = (rest ?? {}) as Record<string, unknown>;
  const where = carriesBody ? 'body' : 'query string';
  const twice = Object.keys(params).filter((name) => Object.hasOwn(fields, name));
  if (twice.length > 0)
    throw DomainError.validation(twice.map((path) => ({ path, message: `is given by the path, not the ${where}` })));
  return { ...fields, ...params };
}

/** The route pattern Nest mounts: OpenAPI's `{name}` as `:name`, or as the segment's own name. */
export const routePattern = (route: HttpRoute): string =>
  route.path.replace(/\{(\w+)\}/g, (_m, field: string) => `:${route.segmentNames?.[field] ?? field}`);

/** The path parameters under their input fields' names. */
function inputFieldsOf(route: HttpRoute, params: Record<string, string>): Record<string, string> {
  const renamed = Object.entries(route.segmentNames ?? {});
  if (renamed.length === 0) return params;
  const fields = { ...params };
  for (const [field, segment] of renamed) {
    if (!Object.hasOwn(fields, segment)) continue;
    fields[field] = fields[segment];
    delete fields[segment];
  }
  return fields;
}

/** The caller (set by AuthGuard), a command's `Idempotency-Key`, and a turn's deferred rate-limit verdict. */
export function httpContext(op: Operation, request: OperationRequest): OperationContext {
  const key = request.headers['idempotency-key'];
  if (op.kind === 'command' && typeof key === 'string' && key.length > MAX_IDEMPOTENCY_KEY_CHARS)
    throw DomainError.validation([
      { path: 'Idempotency-Key', message: `expected at most ${MAX_IDEMPOTENCY_KEY_CHARS} characters` },
    ]);
  return {
    caller: request.principal,
    ...(op.kind === 'command' && typeof key === 'string' && key ? { idempotencyKey: key } : {}),
    ...(request.rateLimit ? { rateLimit: request.rateLimit } : {}),
  };
}

/** The value of the route's last path parameter: what a 404 names. */
export function lastPathValue(route: HttpRoute, input: Record<string, unknown>): string {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return String(input[names.at(-1) ?? ''] ?? '');
}

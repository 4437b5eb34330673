import { COMMANDS, type HttpRoute, type Operation } from '@parley/conversation';
import { QUERIES } from '../operations/query-table';
import type { RouteDoc } from './openapi-routes';

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * An operation's page of the document, split as HTTP takes its one input: the path's fields are
 * path parameters; the rest is the body (post, put) or the query string (get, delete).
 */
function routeOf(op: Operation, route: HttpRoute): RouteDoc {
  const inPath = Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], true])) as Parameters<
    typeof op.input.pick
  >[0];
  const carriesBody = route.method === 'post' || route.method === 'put';
  const body = op.input.omit(inPath);
  return {
    method: route.method,
    path: route.path,
    operationId: op.name,
    tag: op.tag,
    summary: op.summary,
    params: carriesBody ? op.input.pick(inPath) : op.input,
    ...(carriesBody && Object.keys(body.shape).length > 0
      ? { body: { name: `${pascal(op.name)}Request`, schema: body } }
      : {}),
    status: route.status,
    // No content: the other doors answer the handler's null.
    reply: route.status === 204 ? 'none' : op.reply,
    ...(op.startsTurn ? { turn: true } : {}),
    ...(op.kind === 'command' ? { idempotent: true } : {}),
  };
}

/** Every command and query that has an HTTP route, as the document lists them. */
export const OPERATION_ROUTES: readonly RouteDoc[] = [...COMMANDS, ...QUERIES].flatMap((op) =>
  op.http ? [routeOf(op, op.http)] : [],
);

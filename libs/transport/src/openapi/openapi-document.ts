import { commandReply, turnReply } from '@parley/conversation';
import { z } from 'zod';
import { JSON_RPC_ROUTE, jsonRpcError } from './json-rpc-route';
import { OPERATION_ROUTES } from './operation-routes';
import { ROUTES, type RouteDoc } from './openapi-routes';
import { errorReply } from './replies.schemas';

/** Replies shared by many operations, referenced as components by these names. */
const NAMED_REPLIES = new Map<z.ZodType, string>([
  [commandReply, 'CommandReply'],
  [turnReply, 'TurnReply'],
]);

type JsonSchema = Record<string, unknown>;
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
  security: Record<string, string[]>[];
  tags: { name: string }[];
};

/**
 * A zod schema as OpenAPI 3.1 (JSON Schema 2020-12) sees it: the input side, so fields with a
 * default are optional to the caller, without the root `$schema` keyword.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

const GENERATE_PATH = '/internal/llm/generate';

const ERROR_STATUSES: Record<string, string> = {
  '400': 'VALIDATION_FAILED: the request fails the schema; details name each field',
  '401': 'UNAUTHENTICATED: no or bad credentials',
  '403': 'FORBIDDEN: not allowed for this caller',
  '404': 'NOT_FOUND',
  '409': 'CONVERSATION_* status conflicts, CONCURRENCY_CONFLICT, or an idempotency key reused with another body',
  '413': 'PAYLOAD_TOO_LARGE',
  '429': 'RATE_LIMITED, with Retry-After',
  '500': 'INTERNAL',
  '503': 'SERVICE_UNAVAILABLE: a dependency (Redis, an MCP server) is down; Retry-After when a retry soon makes sense',
};

function parameters(route: RouteDoc): unknown[] {
  const params: unknown[] = [];
  if (route.params) {
    const schema = jsonSchemaOf(route.params) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const inPath = route.path.includes(`{${name}}`);
      params.push({
        name,
        in: inPath ? 'path' : 'query',
        required: inPath || (schema.required ?? []).includes(name),
        schema: property,
      });
    }
  }
  if (route.idempotent)
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'The same key with the same body returns the first result and appends nothing.',
      schema: { type: 'string', maxLength: 200 },
    });
  if (route.reply === 'events')
    params.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } });
  return params;
}

function success(reply: RouteDoc['reply'], turn: boolean): unknown {
  if (typeof reply !== 'string') {
    const name = NAMED_REPLIES.get(reply);
    const description = turn
      ? 'The turn ended or paused. A turn that failed answers here too: status FA with its error {code, message}'
      : name
        ? 'Done'
        : 'OK';
    return { description, content: json(name ? ref(name) : jsonSchemaOf(reply)) };
  }
  const ok: Record<string, unknown> = {
    json: { description: 'OK', content: json({}) },
    none: { description: 'Done, no content' },
    text: { description: 'OK', content: { 'text/plain': { schema: { type: 'string' } } } },
    html: { description: 'OK', content: { 'text/html': { schema: { type: 'string' } } } },
    events: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
  };
  return ok[reply];
}

/** Errors of `POST /rpc` as a whole (the body unreadable, no credential…); a call's own errors answer 200. */
const JSON_RPC_STATUSES: Record<string, string> = {
  '204': 'Every call was a notification: nothing to answer',
  '400': '-32700: the body is not JSON',
  '401': 'UNAUTHENTICATED (-32001), id null',
  '413': 'PAYLOAD_TOO_LARGE (-32013), id null',
  '429': 'RATE_LIMITED by address (-32029), id null',
};

/** Generate is an RPC (seed 004 §9): the model's and the limits' failures are its status, not a turn's data. */
const GENERATE_STATUSES: Record<string, string> = {
  '402':
    'BUDGET_EXCEEDED: a spend budget of the caller, the agent or the action would be passed; `details` has the budget, cap, spent and reserved',
  '422': 'LLM_LIMIT_EXCEEDED: past the tool steps, a tool output over its limit, or the token budget',
  '502':
    'LLM_RUNTIME_ERROR: the model runtime failed or is overloaded (after its retry), or two tool calls in a row failed',
  '504': 'LLM_RUNTIME_ERROR: the model timed out',
};

function responses(route: RouteDoc): Record<string, unknown> {
  const result: Record<string, unknown> = { [String(route.status)]: success(route.reply, route.turn === true) };
  if (route.jsonRpc) {
    const error = json(jsonSchemaOf(z.object({ jsonrpc: z.literal('2.0'), id: z.null(), error: jsonRpcError })));
    for (const [status, description] of Object.entries(JSON_RPC_STATUSES))
      result[status] = status === '204' ? { description } : { description, content: error };
    return result;
  }
  if (route.turn)
    result['202'] = {
      description: 'The turn goes on (wait=false, or timeoutMs passed)',
      content: json(ref('CommandReply')),
    };
  const errors = route.public ? ['500'] : Object.keys(ERROR_STATUSES);
  for (const status of errors) result[status] = { description: ERROR_STATUSES[status], content: json(ref('Error')) };
  if (route.path === '/health/ready')
    result['503'] = { description: 'SERVICE_UNAVAILABLE, naming the failing dependency', content: json(ref('Error')) };
  if (route.path === GENERATE_PATH)
    for (const [status, description] of Object.entries(GENERATE_STATUSES))
      result[status] = { description, content: json(ref('Error')) };
  return result;
}

/**
 * The OpenAPI 3.1 document: every command and query of the tables that has an HTTP route, and the
 * routes listed apart (ROUTES), from the zod schemas the routes validate with.
 */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = { Error: jsonSchemaOf(errorReply) };
  for (const [schema, name] of NAMED_REPLIES) schemas[name] = jsonSchemaOf(schema);
  const paths: OpenApiDocument['paths'] = {};
  const routes = [...OPERATION_ROUTES, JSON_RPC_ROUTE, ...ROUTES];
  for (const route of routes) {
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      parameters: parameters(route),
      responses: responses(route),
      ...(route.public ? { security: [] } : {}),
    };
    if (route.body) {
      schemas[route.body.name] = jsonSchemaOf(route.body.schema);
      const types = route.body.contentTypes ?? ['application/json'];
      operation.requestBody = {
        required: true,
        content: Object.fromEntries(types.map((t) => [t, { schema: ref(route.body!.name) }])),
      };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley',
      version,
      description:
        'Event-sourced LLM conversations. Every route but the operational ones takes ' +
        '`Authorization: Bearer <api key or JWT>`. Over NATS, a command or query whose operationId is a ' +
        'NATS method answers on `<prefix>.cmd.<operationId>` or `<prefix>.qry.<operationId>` with the same body, ' +
        'and is a JSON-RPC 2.0 method of `POST /rpc` and NATS `<prefix>.rpc`.',
    },
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key (pk_…) or JWT' } },
    },
  };
}

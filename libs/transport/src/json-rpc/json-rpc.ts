import type { Principal, SubjectRateLimiter } from '@parley/auth';
import { DomainError, ERROR_STATUS, errorBody, type ErrorBody } from '@parley/core';

type ErrorCode = keyof typeof ERROR_STATUS;
import { unavailableError } from '@parley/platform';
import { invokeMethod, methodOf, type RpcMethods } from '../nats/rpc-method';
import type { Forward } from './json-rpc-forward';

/** Where JSON-RPC is served over HTTP; HttpErrorFilter answers the errors of its requests as JSON-RPC errors. */
export const JSON_RPC_PATH = '/rpc';

export type JsonRpcId = string | number | null;

export interface JsonRpcError {
  code: number;
  message: string;
  /** Parley's error body: its code (NOT_FOUND, FORBIDDEN, …), message and details. */
  data: ErrorBody['error'];
}

export type JsonRpcResponse =
  { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcError };

/** What a JSON-RPC message is answered with: one response, a batch's, or nothing (notifications only). */
export type JsonRpcReply = JsonRpcResponse | JsonRpcResponse[] | null;

/** The most calls one batch may hold; a longer one is refused whole (-32600). */
export const MAX_BATCH_CALLS = 100;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/**
 * The JSON-RPC code of a Parley error. VALIDATION_FAILED is -32602 (invalid params) and INTERNAL
 * -32603; every other code takes one of the server-error range from its HTTP status, so a caller
 * can branch on either: a 4xx status `s` is `-32000 - (s - 400)` (401 → -32001, 403 → -32003,
 * 404 → -32004, 409 → -32009, 413 → -32013, 422 → -32022, 429 → -32029) and a 5xx one
 * `-32050 - (s - 500)` (502 → -32052, 503 → -32053, 504 → -32054). `data.code` tells them apart.
 */
export function jsonRpcCodeOf(code: ErrorCode): number {
  if (code === 'VALIDATION_FAILED') return INVALID_PARAMS;
  if (code === 'INTERNAL') return INTERNAL_ERROR;
  const status: number = ERROR_STATUS[code];
  return status >= 500 ? -32050 - (status - 500) : -32000 - (status - 400);
}

/** A Parley error as a JSON-RPC error object, Parley's body in `data`. */
export function jsonRpcErrorOf(err: DomainError, code = jsonRpcCodeOf(err.code)): JsonRpcError {
  return { code, message: err.message, data: errorBody(err).error };
}

export const errorResponse = (id: JsonRpcId, error: JsonRpcError): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error,
});

/** The answer to a message that is not JSON at all (-32700), HTTP's or NATS's. */
export const parseErrorResponse = (): JsonRpcResponse =>
  errorResponse(
    null,
    jsonRpcErrorOf(
      DomainError.validation(
        [{ path: '', message: 'the request is not JSON' }],
        'Parse error: the request is not JSON.',
      ),
      PARSE_ERROR,
    ),
  );

const invalidRequest = (id: JsonRpcId, path: string, message: string): JsonRpcResponse =>
  errorResponse(
    id,
    jsonRpcErrorOf(
      DomainError.validation([{ path, message }], `Invalid request: ${path} ${message}.`),
      INVALID_REQUEST,
    ),
  );

/** -32601, with Parley's NOT_FOUND in `data`. */
class MethodNotFound extends DomainError {
  constructor(name: string) {
    super('NOT_FOUND', `Method not found: there is no method '${name}'.`, { method: name });
  }
}

export interface JsonRpcOptions {
  rateLimiter: SubjectRateLimiter;
  /** Where a method of the other table goes when this process does not serve it (forwarderOf). */
  forwardOf?(name: string): Forward | undefined;
  onInternal?(err: unknown): void;
}

/** Who calls: the authenticated principal, and the credential it came with (for a forwarded call). */
export interface JsonRpcCaller {
  principal: Principal;
  authorization: string | undefined;
}

const isId = (id: unknown): id is JsonRpcId => id === null || typeof id === 'string' || typeof id === 'number';

/**
 * JSON-RPC 2.0 over the methods of the command and query tables (the same RpcMethods as NATS:
 * the method is the operation's name, params its payload). Each call is checked and run as the
 * other doors run it (roles, one request of the caller's rate limit, the operation's schema).
 * A batch's calls run concurrently and are answered in the batch's order; a notification (no
 * `id`) runs and is not answered; a message of notifications only is answered with nothing. A
 * method of a table this process does not serve is forwarded (`forwardOf`) when there is one.
 */
export class JsonRpcDispatcher {
  constructor(
    private readonly methods: () => RpcMethods,
    private readonly options: JsonRpcOptions,
  ) {}

  async dispatch(message: unknown, caller: JsonRpcCaller): Promise<JsonRpcReply> {
    if (!Array.isArray(message)) return this.call(message, caller);
    if (message.length === 0) return invalidRequest(null, '(batch)', 'is an empty array');
    if (message.length > MAX_BATCH_CALLS)
      return invalidRequest(null, '(batch)', `holds ${message.length} calls; at most ${MAX_BATCH_CALLS}`);
    const answers = await Promise.all(message.map((member) => this.call(member, caller)));
    const responses = answers.filter((answer): answer is JsonRpcResponse => answer !== null);
    return responses.length > 0 ? responses : null;
  }

  private async call(request: unknown, caller: JsonRpcCaller): Promise<JsonRpcResponse | null> {
    if (typeof request !== 'object' || request === null || Array.isArray(request))
      return invalidRequest(null, '(request)', 'expected an object');
    const { jsonrpc, method: name, params, id } = request as Record<string, unknown>;
    const notification = !Object.hasOwn(request, 'id');
    if (!notification && !isId(id)) return invalidRequest(null, 'id', 'expected a string, a number or null');
    const answerId = notification ? null : (id as JsonRpcId);
    if (jsonrpc !== '2.0') return invalidRequest(answerId, 'jsonrpc', "expected '2.0'");
    if (typeof name !== 'string') return invalidRequest(answerId, 'method', 'expected a string');
    if (params !== undefined && (typeof params !== 'object' || params === null))
      return invalidRequest(answerId, 'params', 'expected an object');

    let response: JsonRpcResponse;
    try {
      response = { jsonrpc: '2.0', id: answerId, result: await this.invoke(name, params, caller) };
    } catch (err) {
      response = errorResponse(answerId, this.errorOf(err));
    }
    return notification ? null : response;
  }

  /**
   * Runs one method for `caller` as a call of a message does, its failure thrown: a DomainError,
   * MethodNotFound for a name no table has, or anything unexpected. MCP's tools call it too.
   */
  async invoke(name: string, params: unknown, caller: JsonRpcCaller): Promise<unknown> {
    const byName = () => {
      if (Array.isArray(params))
        throw DomainError.validation(
          [{ path: 'params', message: 'expected an object of named fields, not an array' }],
          'Invalid params: params are passed by name.',
        );
      return params ?? {};
    };
    const method = methodOf(this.methods(), name);
    if (method) return invokeMethod(method, caller.principal, byName, this.options.rateLimiter);
    const forward = this.options.forwardOf?.(name);
    if (!forward) throw new MethodNotFound(name);
    return forward(name, byName(), caller.authorization);
  }

  private errorOf(err: unknown): JsonRpcError {
    if (err instanceof MethodNotFound) return jsonRpcErrorOf(err, METHOD_NOT_FOUND);
    if (err instanceof DomainError) return jsonRpcErrorOf(err);
    this.options.onInternal?.(err);
    const unavailable = unavailableError(err);
    if (unavailable) return jsonRpcErrorOf(unavailable);
    return jsonRpcErrorOf(new DomainError('INTERNAL', 'Something went wrong inside Parley; the error was logged.'));
  }
}

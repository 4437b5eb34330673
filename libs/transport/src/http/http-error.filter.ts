import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { unavailableError } from '@parley/platform';
import { DomainError, ERROR_STATUS, errorBody, type ErrorBody } from '@parley/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorResponse, JSON_RPC_PATH, jsonRpcCodeOf, PARSE_ERROR } from '../json-rpc/json-rpc';

/**
 * The one place HTTP statuses are chosen. Domain errors carry their code; Nest's own
 * exceptions (unknown route, body too large, malformed JSON) are translated to the same shape;
 * a dependency that cannot be reached is SERVICE_UNAVAILABLE (logged); anything else is
 * INTERNAL, without a stack trace. On `POST /rpc` the same error is a JSON-RPC error response
 * (id null) under the same status: a body that is not JSON is -32700.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly onInternal: (err: unknown) => void = () => undefined) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body, headers } = this.toResponse(exception);
    for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
    const path = host.switchToHttp().getRequest<FastifyRequest>().url?.split('?')[0];
    if (path === JSON_RPC_PATH) {
      const unreadable = !(exception instanceof DomainError) && (status === 400 || status === 415);
      const code = unreadable ? PARSE_ERROR : jsonRpcCodeOf(body.error.code);
      const message = unreadable ? `Parse error: ${body.error.message}` : body.error.message;
      void reply.status(status).send(errorResponse(null, { code, message, data: body.error }));
      return;
    }
    void reply.status(status).send(body);
  }

  toResponse(exception: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
    const unavailable = unavailableError(exception);
    if (unavailable) {
      this.onInternal(exception);
      return this.toResponse(unavailable);
    }
    if (exception instanceof DomainError) {
      const headers: Record<string, string> = {};
      const fallback = RETRY_AFTER_SECONDS[exception.code];
      if (fallback !== undefined) {
        const retryAfter = exception.details?.retryAfterSeconds;
        headers['retry-after'] = String(typeof retryAfter === 'number' ? retryAfter : fallback);
      }
      return { status: exception.status ?? ERROR_STATUS[exception.code], body: errorBody(exception), headers };
    }
    const status = statusOf(exception);
    if (status === 404) return plain(404, 'NOT_FOUND', 'No such route.');
    if (status === 413) return plain(413, 'PAYLOAD_TOO_LARGE', 'The request body is over the size limit.');
    if (status === 415)
      return plain(400, 'VALIDATION_FAILED', 'The request body must be JSON (content-type: application/json).');
    if (status === 400) return plain(400, 'VALIDATION_FAILED', `The request is malformed: ${messageOf(exception)}`);
    this.onInternal(exception);
    return plain(500, 'INTERNAL', 'Something went wrong inside Parley; the error was logged.');
  }
}

/**
 * API.md: a 429 and a 503 always say when to come back. The error's `retryAfterSeconds` where its
 * thrower knows (a rate limit's window, a dependency's retry delay); else these.
 */
const RETRY_AFTER_SECONDS: Partial<Record<string, number>> = { RATE_LIMITED: 1, SERVICE_UNAVAILABLE: 5 };

function plain(status: number, code: ErrorBody['error']['code'], message: string) {
  return { status, body: { error: { code, message } }, headers: {} };
}

function statusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const s = (exception as { statusCode?: unknown })?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function messageOf(exception: unknown): string {
  return exception instanceof Error ? exception.message : 'bad request';
}

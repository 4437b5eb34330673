import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { maskSecrets } from '@parley/observability';

export type LlmErrorKind =
  | 'rate_limited'
  | 'overloaded'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'stream_interrupted'
  | 'auth'
  | 'bad_request'
  | 'not_found'
  | 'context_length'
  | 'aborted'
  | 'circuit_open'
  | 'unknown';

const RETRYABLE: ReadonlySet<LlmErrorKind> = new Set([
  'rate_limited',
  'overloaded',
  'server_error',
  'timeout',
  'connection',
  'stream_interrupted',
]);

/** Every failure of a model call, classified once: the retry policy and the breaker read only this. */
export class LlmError extends Error {
  readonly retryable: boolean;
  readonly status?: number;
  /** What the provider asked us to wait (Retry-After), when it said. */
  readonly retryAfterMs?: number;

  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    extra: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: extra.cause });
    this.name = 'LlmError';
    this.retryable = RETRYABLE.has(kind);
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
  }
}

/** Retry-After as milliseconds: `retry-after-ms` first, then `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function kindOfStatus(status: number, code: string): LlmErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 408) return 'timeout';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (/context_length|context length|maximum context/i.test(code)) return 'context_length';
  if (status === 400 || status === 422) return 'bad_request';
  if (status === 409 || status >= 500) return 'server_error';
  return 'unknown';
}

/**
 * Maps anything a call can throw to an LlmError. `phase` tells a failure before the response
 * (the SDK wraps those) from one while reading the stream (a cut socket, a truncated chunk).
 */
export function toLlmError(err: unknown, phase: 'request' | 'stream'): LlmError {
  if (err instanceof LlmError) return err;
  // Some providers quote the refused key in their message; it would end in events and replies.
  const message = maskSecrets(err instanceof Error ? err.message : String(err));
  if (err instanceof APIUserAbortError) return new LlmError('aborted', 'The model call was aborted.', { cause: err });
  if (err instanceof APIConnectionTimeoutError) return new LlmError('timeout', message, { cause: err });
  if (err instanceof APIConnectionError) return new LlmError('connection', message, { cause: err });
  if (err instanceof APIError) {
    if (err.status === undefined) {
      // An error object sent inside the stream: the server gave up mid-reply.
      return new LlmError('server_error', message, { cause: err });
    }
    const kind = kindOfStatus(err.status, `${err.code ?? ''} ${message}`);
    return new LlmError(kind, message, { status: err.status, retryAfterMs: parseRetryAfter(err.headers), cause: err });
  }
  if (phase === 'stream') {
    return new LlmError('stream_interrupted', `The stream broke off: ${message}`, { cause: err });
  }
  return new LlmError('unknown', message, { cause: err });
}

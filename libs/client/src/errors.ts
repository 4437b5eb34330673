/** Parley's error codes (docs/api.md, Errors), with the HTTP status each is answered with. */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  CONVERSATION_BUSY: 409,
  CONVERSATION_WAITING: 409,
  CONVERSATION_PAUSED: 409,
  CONVERSATION_CLOSED: 409,
  CONVERSATION_NOT_WAITING: 409,
  CONCURRENCY_CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  BUDGET_EXCEEDED: 402,
  PAYLOAD_TOO_LARGE: 413,
  LLM_LIMIT_EXCEEDED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  LLM_RUNTIME_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
} as const;

/** A code of the table above; a newer server may send others. */
export type ParleyErrorCode = keyof typeof ERROR_STATUS | (string & {});

/** Parley's error body: `{error: {code, message, details?}}` on every front door. */
export interface ParleyErrorBody {
  code: ParleyErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** One problem of a VALIDATION_FAILED: where (`path`) and what. */
export interface ValidationProblem {
  path: string;
  message: string;
}

/**
 * What every call of the client throws when Parley refuses it (or cannot be reached): Parley's
 * `code`, the HTTP `status` that code is answered with on HTTP, and the `details` (the problems of
 * a VALIDATION_FAILED, each with its path).
 */
export class ParleyError extends Error {
  override readonly name = 'ParleyError';
  readonly status: number;

  constructor(
    readonly code: ParleyErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    status?: number,
  ) {
    super(`${code}: ${message}`);
    this.status = status ?? (ERROR_STATUS as Record<string, number>)[code] ?? 500;
  }

  /** The problems of a VALIDATION_FAILED (empty for other codes). */
  get problems(): ValidationProblem[] {
    const problems = this.details?.problems;
    return Array.isArray(problems) ? (problems as ValidationProblem[]) : [];
  }

  /** From an error envelope as Parley sends it (`{error: …}`), or a stand-in when it is not one. */
  static fromBody(body: unknown, status?: number): ParleyError {
    const error = (body as { error?: Partial<ParleyErrorBody> } | null)?.error;
    if (error && typeof error.code === 'string' && typeof error.message === 'string')
      return new ParleyError(error.code, error.message, error.details, status);
    const code: ParleyErrorCode = status && status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL';
    return new ParleyError(
      code,
      `unexpected answer${status ? ` (HTTP ${status})` : ''}: ${String(JSON.stringify(body)).slice(0, 200)}`,
      undefined,
      status,
    );
  }
}

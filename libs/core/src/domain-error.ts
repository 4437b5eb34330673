/**
 * The stable error codes (docs/api.md). Libraries throw DomainError with one of these;
 * each transport maps the code to its own status once (see libs/transport).
 */
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

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem of a request, for VALIDATION_FAILED details: where it is and why. */
export interface FieldProblem {
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** A status other than the code's, where a transport has statuses (generate's 504 for LLM_RUNTIME_ERROR). */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static validation(problems: FieldProblem[], message = 'The request is not valid.'): DomainError {
    return new DomainError('VALIDATION_FAILED', message, { problems });
  }

  static notFound(what: string, id: string): DomainError {
    return new DomainError('NOT_FOUND', `${what} '${id}' was not found.`, { [lowerFirst(what)]: id });
  }
}

const lowerFirst = (s: string) =>
  s.charAt(0).toLowerCase() + s.slice(1).replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase());

/** The body every transport answers an error with. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export function errorBody(err: DomainError): ErrorBody {
  return { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } };
}

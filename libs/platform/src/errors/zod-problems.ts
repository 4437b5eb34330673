import type { ZodError } from 'zod';
import { DomainError, unstorableTextProblems, type FieldProblem } from '@parley/core';

/** Turns a zod failure into field problems ("content: Too small: expected string to have >=1 characters"). */
function zodProblems(error: ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join('.') : '(body)',
    message: issue.message,
  }));
}

/**
 * Parses `input` with `schema` or throws VALIDATION_FAILED listing each field. Text no store can
 * hold (NUL, unpaired surrogates) is refused here, at every front door, before anything runs.
 */
export function parseOrThrow<T>(
  schema: { safeParse(input: unknown): { success: true; data: T } | { success: false; error: ZodError } },
  input: unknown,
): T {
  const unstorable = unstorableTextProblems(input);
  if (unstorable.length > 0) throw DomainError.validation(unstorable);
  const result = schema.safeParse(input);
  if (!result.success) throw DomainError.validation(zodProblems(result.error));
  return result.data;
}

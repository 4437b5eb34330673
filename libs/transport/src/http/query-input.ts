import { parseOrThrow } from '@parley/platform';
import { DomainError } from '@parley/core';
import type { z } from 'zod';

/** Path parameters and query string, validated together by the query's schema (the same one NATS uses). */
export const queryInput = <S extends z.ZodType>(schema: S, params: object, query: object): z.output<S> =>
  parseOrThrow(schema, { ...(query ?? {}), ...params });

/** HTTP's answer where the seed returns null: 404. */
export function orNotFound<T>(value: T | null, what: string, id: string): T {
  if (value === null) throw DomainError.notFound(what, id);
  return value;
}

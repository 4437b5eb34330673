import { types } from 'node:util';
import { DomainError } from '@parley/core';

// PostgreSQL's SQLSTATEs that mean "no usable connection": class 08 (connection exception),
// the server shutting down or starting (57P01–57P03), too many connections (53300), and a
// statement cancelled by statement_timeout (57014): the database is too slow to answer now.
const POSTGRES_UNAVAILABLE = /^(08...|57P0[123]|57014|53300)$/;
// What `pg` and `pg-pool` throw without a SQLSTATE when the connection is gone or never came.
const POSTGRES_MESSAGES = ['Connection terminated', 'timeout exceeded when trying to connect', 'is not queryable'];
// What ioredis throws while its connection is down (no offline queue, or retries used up).
const REDIS_MESSAGES = ["Stream isn't writeable", 'Connection is closed'];
// A socket refused, reset or unreachable: some dependency is down, which one the error does not say.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
// Set on the errors of a dependency's own sockets (raisedBy): a reset names no peer.
const RAISED_BY = Symbol.for('parley.raisedBy');

type Dependency = 'postgres' | 'redis';
type Marked = Error & { [RAISED_BY]?: Dependency };

/**
 * Marks `err` as raised by `dependency`'s connection, for a socket error that does not say whose
 * socket it was (`read ECONNRESET`, `connect ECONNREFUSED`): unavailableError then names it.
 */
export function raisedBy(err: Error, dependency: Dependency): void {
  (err as Marked)[RAISED_BY] = dependency;
}

/**
 * SERVICE_UNAVAILABLE (503, Retry-After) for an error that says a dependency could not be
 * reached — PostgreSQL's connection errors, ioredis with its connection down, a refused or reset
 * socket — or null for any other error. The transports ask it before they answer INTERNAL, so a
 * client sees a retryable 503 during an outage instead of a 500 that reads as a bug.
 */
export function unavailableError(err: unknown): DomainError | null {
  // isNativeError: a socket error comes from Node's own realm, which `instanceof Error` of
  // another realm (a VM context, such as a test runner's) does not recognise.
  if (!(err instanceof Error || types.isNativeError(err)) || err instanceof DomainError) return null;
  const dependency = dependencyOf(err);
  if (!dependency) return null;
  return new DomainError('SERVICE_UNAVAILABLE', `${NAMES[dependency]} is unavailable; try again shortly.`, {
    ...(dependency === 'unknown' ? {} : { dependency }),
    retryAfterSeconds: 5,
  });
}

const NAMES = { postgres: 'PostgreSQL', redis: 'Redis', unknown: 'A dependency' } as const;

function dependencyOf(err: Error): keyof typeof NAMES | null {
  const marked = (err as Marked)[RAISED_BY];
  if (marked) return marked;
  const code = (err as { code?: unknown }).code;
  const coded = typeof code === 'string' ? code : '';
  if (POSTGRES_UNAVAILABLE.test(coded) || POSTGRES_MESSAGES.some((m) => err.message.includes(m))) return 'postgres';
  if (err.name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((m) => err.message.includes(m))) return 'redis';
  return SOCKET_CODES.has(coded) ? 'unknown' : null;
}

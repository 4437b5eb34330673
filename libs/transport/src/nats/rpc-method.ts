import { requireRoles, type Principal, type Role, type SubjectRateLimiter } from '@parley/auth';
import { parseOrThrow } from '@parley/platform';
import type { z } from 'zod';

/** One request-reply method of a NATS or JSON-RPC front door: the schema its payload must pass, and what it runs. */
export interface RpcMethod {
  schema: z.ZodType;
  /** As HTTP's @Roles: the caller needs one of them, else FORBIDDEN before anything runs. */
  roles?: readonly Role[];
  /**
   * As HTTP's @StartsTurn: the request is counted by the rate limit, and `run` gets the verdict
   * to await itself, beside the turn's running-turn slot (TurnCommand).
   */
  startsTurn?: boolean;
  run(principal: Principal, input: never, rateLimit?: Promise<void>): Promise<unknown>;
}

export type RpcMethods = Readonly<Record<string, RpcMethod>>;

/** The method of that name, if the table has one (never one of Object's own). */
export const methodOf = (methods: RpcMethods, name: string): RpcMethod | undefined =>
  Object.hasOwn(methods, name) ? methods[name] : undefined;

/**
 * Runs `method` for an authenticated caller as every door does: its roles, one request of the
 * caller's rate limit (left pending for a turn's command), then the payload (read only now, so a
 * refused caller learns nothing about it) checked against the method's schema.
 */
export async function invokeMethod(
  method: RpcMethod,
  principal: Principal,
  payload: () => unknown,
  rateLimiter: SubjectRateLimiter,
): Promise<unknown> {
  if (method.roles) requireRoles(principal, method.roles);
  // A turn method awaits the verdict itself, beside its running-turn slot.
  const rateLimit = method.startsTurn ? rateLimiter.pending(principal.subject) : undefined;
  if (!rateLimit) await rateLimiter.consume(principal.subject);
  const input = parseOrThrow(method.schema, payload());
  return method.run(principal, input as never, rateLimit);
}

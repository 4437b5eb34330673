import type { Principal, Role } from '@parley/auth';
import type { z } from 'zod';

/** One request-reply method of a NATS front door: the schema its payload must pass, and what it runs. */
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

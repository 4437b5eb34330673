import type { Principal, Role } from '@parley/auth';
import type { z } from 'zod';

/** One request-reply method of a NATS front door: the schema its payload must pass, and what it runs. */
export interface RpcMethod {
  schema: z.ZodType;
  /** As HTTP's @Roles: the caller needs one of them, else FORBIDDEN before anything runs. */
  roles?: readonly Role[];
  run(principal: Principal, input: never): Promise<unknown>;
}

/** Typed helper: `run` receives the schema's output. */
export const rpcMethod = <S extends z.ZodType>(
  schema: S,
  run: (principal: Principal, input: z.output<S>) => Promise<unknown>,
  roles?: readonly Role[],
): RpcMethod => ({ schema, run: run as RpcMethod['run'], ...(roles ? { roles } : {}) });

export type RpcMethods = Readonly<Record<string, RpcMethod>>;

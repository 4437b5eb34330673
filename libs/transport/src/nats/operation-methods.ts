import { fromPayload, payloadSchema } from '../operations/payload';
import type { BoundOperation } from '../operations/bound-operations';
import type { RpcMethods } from './rpc-method';

/**
 * The NATS methods of a table (`<prefix>.cmd.<name>` or `<prefix>.qry.<name>`): the payload is
 * the operation's input (plus `commandId` for a command), the roles and the deferred rate limit
 * are the operation's, as over HTTP.
 */
export function natsMethods(operations: readonly BoundOperation[]): RpcMethods {
  return Object.fromEntries(
    operations.map(({ op, call }) => [
      op.name,
      {
        schema: payloadSchema(op),
        ...(op.roles ? { roles: op.roles } : {}),
        ...(op.startsTurn ? { startsTurn: true } : {}),
        run: (principal, payload: Record<string, unknown>, rateLimit) => {
          const { input, ctx } = fromPayload(payload, principal, rateLimit);
          return call(input, ctx);
        },
      },
    ]),
  );
}

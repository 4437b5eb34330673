import { turnReplyBody, type TurnReply } from '@parley/conversation';
import { fromPayload, payloadSchema } from '../operations/payload';
import type { BoundOperation } from '../operations/bound-operations';
import type { RpcMethods } from './rpc-method';

/**
 * The NATS methods of a table (`<prefix>.cmd.<name>` or `<prefix>.qry.<name>`): the payload is
 * the operation's input (plus `commandId` for a command), the roles and the deferred rate limit
 * are the operation's, as over HTTP, and so are a turn's replies (turnReplyBody).
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
          const answer = call(input, ctx);
          // The same body as HTTP's, without the status line: 200's or 202's.
          return op.startsTurn ? answer.then((reply) => turnReplyBody(reply as TurnReply).body) : answer;
        },
      },
    ]),
  );
}

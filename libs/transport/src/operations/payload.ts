import type { Principal } from '@parley/auth';
import type { Operation, OperationContext } from '@parley/conversation';
import { z } from 'zod';

/** Longest idempotency key, HTTP's `Idempotency-Key` header and the `commandId` field alike. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** Doors without headers (NATS, and JSON-RPC after it) carry a command's idempotency key in the payload. */
const commandId = z.string().trim().min(1).max(MAX_IDEMPOTENCY_KEY_CHARS).optional();

/** What such a door's payload must pass: the operation's input, plus `commandId` for a command. */
export const payloadSchema = (op: Operation): z.ZodObject =>
  op.kind === 'command' ? op.input.extend({ commandId }) : op.input;

/** A checked payload split into the operation's input and its context. */
export function fromPayload(
  payload: Record<string, unknown>,
  caller: Principal,
  rateLimit?: Promise<void>,
): { input: Record<string, unknown>; ctx: OperationContext } {
  const { commandId: key, ...input } = payload;
  return {
    input,
    ctx: {
      caller,
      ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
      ...(rateLimit ? { rateLimit } : {}),
    },
  };
}

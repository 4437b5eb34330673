import { STATUSES } from '@parley/read-models';
import { z } from 'zod';

/**
 * The shapes Parley answers with, for the OpenAPI document only: replies are built by the
 * handlers (libs/conversation/src/api/replies.ts), not parsed, so these describe them.
 */
const code = z.string();

export const errorReply = z.object({
  error: z.object({
    code,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const commandReply = z.object({
  conversationId: z.uuid(),
  status: z.enum(STATUSES),
  /** Pass as `minPosition` to a query to read your own writes. */
  position: z.string(),
});

export const turnReply = commandReply.extend({
  reply: z.string().nullable(),
  pendingQuestion: z
    .object({
      toolCallId: z.string(),
      questions: z.array(
        z.object({
          key: z.string(),
          question: z.string(),
          options: z.array(z.string()).optional(),
          required: z.boolean().optional(),
        }),
      ),
      expiresAt: z.iso.datetime(),
    })
    .optional(),
  pendingApprovals: z.array(z.object({ toolCallId: z.string(), name: z.string(), arguments: z.string() })).optional(),
  finishReason: z.string().nullable().optional(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), estimatedCost: z.number() }),
  error: z.object({ code, message: z.string() }).optional(),
});

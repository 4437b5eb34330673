import { z } from 'zod';
import type { Status } from '@parley/domain';

/**
 * CommandReply and TurnReply as the operations declare them (for the OpenAPI document and the
 * doors derived later): the handlers build the replies (replies.ts), these describe them.
 */
const STATUSES = ['NS', 'RU', 'CO', 'FA', 'WA', 'PA', 'ST', 'TE', 'KI'] as const satisfies readonly Status[];

export const commandReply = z.object({
  conversationId: z.uuid(),
  status: z.enum(STATUSES),
  /** Pass as `minPosition` to a query to read your own writes. */
  position: z.string(),
});

/** A document chunk an answer drew on (seed 001 `rag_sources`). */
export const ragSource = z.object({
  collection: z.string(),
  documentId: z.string(),
  chunkId: z.string(),
  title: z.string().nullable(),
  score: z.number(),
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
  /** The document chunks the answer drew on, when the action's collections gave its prompt a context block. */
  ragSources: z.array(ragSource).optional(),
  /** Structured output: the reply parsed and valid against the action's output schema. */
  output: z
    .unknown()
    .optional()
    .describe(
      "The reply parsed as JSON and valid against the action's output schema; absent when the action has none.",
    ),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), estimatedCost: z.number() }),
  error: z
    .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe(
      'Status FA only: why the turn failed (LLM_RUNTIME_ERROR, LLM_LIMIT_EXCEEDED, TOOL_ERRORS, QUESTION_TIMEOUT, OUTPUT_INVALID, BUDGET_EXCEEDED). The command itself succeeded: HTTP 200, a NATS result.',
    ),
});

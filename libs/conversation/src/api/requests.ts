import { z } from 'zod';

/**
 * Command request bodies, validated at the edge (HTTP and NATS alike) and turned into
 * OpenAPI. Limits that depend on configuration (message length, attachment count) are checked
 * by the handlers.
 */
const code = (max: number) => z.string().trim().min(1).max(max);
const reason = z.string().trim().max(2000).nullish();

export const waitOptions = {
  wait: z.boolean().default(true),
  timeoutMs: z.number().int().min(0).max(600_000).optional(),
};

export const startConversationRequest = z.strictObject({
  agentCode: code(8),
  actionCode: code(12),
  conversationId: z.uuid().optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

export const attachmentSchema = z.strictObject({
  mediaType: z.string().trim().min(1).max(255),
  url: z.url().max(4096),
});

export const sendMessageRequest = z.strictObject({
  content: z.string().refine((s) => s.trim().length > 0, { message: 'must not be empty' }),
  attachments: z.array(attachmentSchema).default([]),
  ...waitOptions,
});

export const submitAnswersRequest = z.strictObject({
  answers: z.record(z.string().min(1).max(128), z.string().max(10_000)),
  ...waitOptions,
});

export const toolCallDecisionRequest = z.strictObject({ reason, ...waitOptions });

export const lifecycleRequest = z.strictObject({ reason });

/** Seed 002's repository: options and the catalog codes of its tools. */
const toolRepositoryBody = {
  options: z
    .strictObject({ triggerOnce: z.boolean().default(false), exclusive: z.boolean().default(false) })
    .default({ triggerOnce: false, exclusive: false }),
  tools: z.array(code(12)).min(1).max(64),
};

export const repositoryIdSchema = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');

export const addToolRepositoryRequest = z.strictObject({ repositoryId: repositoryIdSchema, ...toolRepositoryBody });

export const changeToolRepositoryRequest = z.strictObject(toolRepositoryBody);

export type StartConversationRequest = z.output<typeof startConversationRequest>;
export type SendMessageRequest = z.output<typeof sendMessageRequest>;
export type SubmitAnswersRequest = z.output<typeof submitAnswersRequest>;
export type ToolCallDecisionRequest = z.output<typeof toolCallDecisionRequest>;
export type LifecycleRequest = z.output<typeof lifecycleRequest>;
export type AddToolRepositoryRequest = z.output<typeof addToolRepositoryRequest>;
export type ChangeToolRepositoryRequest = z.output<typeof changeToolRepositoryRequest>;

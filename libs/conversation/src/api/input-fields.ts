import { z } from 'zod';

/**
 * The fields command inputs share. Each input is one object for every front door: over HTTP
 * `conversationId` (and any other id in the path) comes from the path, the rest from the body.
 * Limits that depend on configuration (message length, attachment count) are the handlers'.
 */
export const conversationId = z.uuid();
export const code = (max: number) => z.string().trim().min(1).max(max);
export const reason = z.string().trim().max(2000).nullish();
export const toolCallId = z.string().min(1).max(200);

export const waitOptions = {
  wait: z.boolean().default(true),
  timeoutMs: z.number().int().min(0).max(600_000).optional(),
};

/** The scheme is checked here; the host rules (no private addresses) in the send-message handler. */
export const attachmentSchema = z.strictObject({
  mediaType: z.string().trim().min(1).max(255),
  url: z
    .url()
    .max(4096)
    .refine((u) => /^(https|data):/i.test(u), { message: 'only https: and data: URLs are accepted' }),
});

export const repositoryIdSchema = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');

/** Seed 002's repository: options and the catalog codes of its tools. */
export const toolRepositoryBody = {
  options: z
    .strictObject({ triggerOnce: z.boolean().default(false), exclusive: z.boolean().default(false) })
    .default({ triggerOnce: false, exclusive: false }),
  tools: z.array(code(12)).min(1).max(64),
};

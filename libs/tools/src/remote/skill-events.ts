import { z } from 'zod';

/**
 * Seed 003's event-driven skills on NATS: Parley publishes a SkillInvocationEvent on the remote
 * tool's subject, and the service answers with a SkillCompletionEvent on `replyTo`.
 */
export interface SkillInvocationEvent {
  correlationId: string;
  skillName: string;
  arguments: Record<string, unknown>;
  /** Where the completion goes: `<prefix>.tool-replies.<conversationId>` (JetStream). */
  replyTo: string;
  conversationId: string;
  toolCallId: string;
  /** ISO time after which the call has failed as a timeout and a completion is ignored. */
  deadline: string;
}

/** A completion carries exactly one of `result` (any JSON; a string is taken as the text) and `error`. */
export const skillCompletionSchema = z.union([
  z.strictObject({ correlationId: z.string().min(1).max(200), result: z.unknown().refine((v) => v !== undefined) }),
  z.strictObject({
    correlationId: z.string().min(1).max(200),
    error: z.strictObject({ message: z.string().min(1).max(10_000), code: z.string().max(64).optional() }),
  }),
]);

export type SkillCompletionEvent = z.output<typeof skillCompletionSchema>;

const streamPart = (prefix: string) => prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_');

/** JetStream's stream of remote tool invocations, holding every remote tool's subject: `parley` -> `PARLEY_REMOTE_TOOLS`. */
export const invocationStreamName = (prefix: string): string => `${streamPart(prefix)}_REMOTE_TOOLS`;

/** JetStream's stream of completions, `<prefix>.tool-replies.>`: `parley` -> `PARLEY_TOOL_REPLIES`. */
export const replyStreamName = (prefix: string): string => `${streamPart(prefix)}_TOOL_REPLIES`;

export const replySubjectOf = (prefix: string, conversationId: string): string =>
  `${prefix}.tool-replies.${conversationId}`;

/** The conversation a reply subject names, or null for a subject outside `<prefix>.tool-replies.*`. */
export function conversationOfReply(prefix: string, subject: string): string | null {
  const head = `${prefix}.tool-replies.`;
  if (!subject.startsWith(head)) return null;
  const id = subject.slice(head.length);
  return id && !id.includes('.') ? id : null;
}

import { z } from 'zod';

/**
 * Query inputs, validated at the edge by HTTP (path + query string) and NATS (the JSON payload)
 * alike, and turned into OpenAPI. Every conversation query takes `minPosition`.
 */
export const eventPosition = z
  .string()
  .regex(/^(pg|esdb):\d+:\d+$/, { message: 'expected an event-store position such as pg:<tx>:<position>' });
const conversationId = z.uuid();
const minPosition = eventPosition.optional();
const code = z.string().trim().min(1).max(64);
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const instant = z.iso.datetime({ offset: true });

export const noInput = z.strictObject({});
export const byCode = z.strictObject({ code });
export const byName = z.strictObject({ name: z.string().trim().min(1).max(128) });
export const byConversation = z.strictObject({ conversationId, minPosition });

export const STATUSES = ['NS', 'RU', 'CO', 'FA', 'WA', 'PA', 'ST', 'TE', 'KI'] as const;

/** The filters a list and its counts share: everything but status and paging. */
const conversationFilters = {
  agentCode: code.optional(),
  actionCode: code.optional(),
  /** The owner (the subject that started it); a client sees only its own whatever it names. */
  subject: z.string().trim().min(1).max(256).optional(),
  /** Case-insensitive text in the id, agent, action, owner or metadata. */
  text: z.string().trim().min(1).max(200).optional(),
  from: instant.optional(),
  to: instant.optional(),
  minPosition,
};

export const listConversationsQuery = z.strictObject({
  status: z.enum(STATUSES).optional(),
  ...conversationFilters,
  limit: int(1, 200).default(50),
  cursor: z.string().max(512).optional(),
});

export const countConversationsQuery = z.strictObject(conversationFilters);

export const usageQuery = z.strictObject({
  groupBy: z.enum(['day', 'subject', 'agent', 'action', 'model']),
  from: z.iso.date().optional(),
  to: z.iso.date().optional(),
  /** A client may name only its own subject (FORBIDDEN otherwise); it sees only its own usage anyway. */
  subject: z.string().min(1).max(200).optional(),
  agent: code.optional(),
  action: code.optional(),
  model: code.optional(),
  minPosition,
});

export const eventsQuery = z.strictObject({
  conversationId,
  fromRevision: int(0, Number.MAX_SAFE_INTEGER).default(0),
  limit: int(1, 1000).default(100),
});

export const stateQuery = z.strictObject({ conversationId, atRevision: int(0, Number.MAX_SAFE_INTEGER).optional() });
export const verifyQuery = z.strictObject({ conversationId });
export const feedQuery = z.strictObject({ fromPosition: eventPosition.optional(), limit: int(1, 1000).default(100) });

export type ByConversation = z.output<typeof byConversation>;
export type ListConversationsQuery = z.output<typeof listConversationsQuery>;
export type CountConversationsQuery = z.output<typeof countConversationsQuery>;
export type UsageQuery = z.output<typeof usageQuery>;
export type EventsQuery = z.output<typeof eventsQuery>;
export type StateQuery = z.output<typeof stateQuery>;
export type FeedQuery = z.output<typeof feedQuery>;

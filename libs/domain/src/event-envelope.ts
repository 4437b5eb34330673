import type { ConversationEvent } from './conversation.events';

/** Metadata every conversation event carries, besides the store's own hash pair. */
export interface EventMeta {
  occurredAt: string;
  correlationId?: string;
  causationId?: string;
  /** The idempotency key of the command that caused the event, when a command did. */
  commandId?: string;
  /** Hash of that command's body: the same key with another body is refused. */
  commandHash?: string;
  actor?: string;
}

export type ConversationEnvelope = ConversationEvent & { readonly metadata: EventMeta };

import { conversationIdOf, type ConversationEvent } from '@parley/conversation';
import type { RecordedEvent } from '@parley/event-store';

/** A stored conversation event as the projections read it. */
export interface ProjectedEvent {
  conversationId: string;
  revision: number;
  position: string;
  /** When it happened (metadata.occurredAt, else the store's createdAt), as ISO text. */
  at: string;
  event: ConversationEvent;
}

export function projectedEvent(recorded: RecordedEvent): ProjectedEvent {
  const occurredAt = recorded.metadata.occurredAt;
  return {
    conversationId: conversationIdOf(recorded.streamId),
    revision: Number(recorded.revision),
    position: recorded.position,
    at: typeof occurredAt === 'string' ? occurredAt : recorded.createdAt.toISOString(),
    event: { type: recorded.type, data: recorded.data } as ConversationEvent,
  };
}

import { toEnvelope } from '@parley/conversation';
import { conversationIdOf, type ConversationEvent } from '@parley/domain';
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

/**
 * The stored events as the projections read them: upcast to the current version of each type;
 * an event of a type (or version) a newer Parley wrote is left out.
 */
export function projectedEvents(recorded: readonly RecordedEvent[]): ProjectedEvent[] {
  return recorded.flatMap((e) => {
    const envelope = toEnvelope(e);
    if (!envelope) return [];
    const occurredAt = e.metadata.occurredAt;
    return {
      conversationId: conversationIdOf(e.streamId),
      revision: Number(e.revision),
      position: e.position,
      at: typeof occurredAt === 'string' ? occurredAt : e.createdAt.toISOString(),
      event: envelope,
    };
  });
}

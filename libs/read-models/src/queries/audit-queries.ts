import { assertCanRead, requireRoles, type Principal } from '@parley/auth';
import { toEnvelope } from '@parley/conversation';
import { fold, streamIdOf } from '@parley/domain';
import type { EventStore, RecordedEvent } from '@parley/event-store';
import { DomainError } from '@parley/core';
import type { EventsQuery, FeedQuery, StateQuery } from './query-schemas';

/** A stored event as auditors read it: JSON-safe, metadata and hash pair included. */
export function eventView(e: RecordedEvent) {
  return {
    streamId: e.streamId,
    revision: Number(e.revision),
    position: e.position,
    eventId: e.eventId,
    type: e.type,
    schemaVersion: e.schemaVersion,
    data: e.data,
    metadata: e.metadata,
    createdAt: e.createdAt.toISOString(),
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

export type EventView = ReturnType<typeof eventView>;

/**
 * What auditors read straight from the event store, bypassing the projections: a stream, the
 * state at a revision, the hash-chain check and the global feed. The owner of a conversation
 * may read its own stream and state; verification and the feed are for auditors and admins.
 */
export class AuditQueries {
  constructor(private readonly store: EventStore) {}

  async getEvents(principal: Principal, q: EventsQuery): Promise<EventView[]> {
    await this.assertReadable(principal, q.conversationId);
    const events = await this.store.readStream(streamIdOf(q.conversationId), {
      fromRevision: BigInt(q.fromRevision),
      maxCount: q.limit,
    });
    return events.map(eventView);
  }

  async getState(principal: Principal, q: StateQuery) {
    await this.assertReadable(principal, q.conversationId);
    const events = await this.store.readStream(
      streamIdOf(q.conversationId),
      q.atRevision === undefined ? {} : { maxCount: q.atRevision + 1 },
    );
    const last = events.at(-1) as RecordedEvent;
    if (q.atRevision !== undefined && Number(last.revision) < q.atRevision)
      throw new DomainError('NOT_FOUND', `Conversation '${q.conversationId}' has no revision ${q.atRevision}.`, {
        atRevision: q.atRevision,
        lastRevision: Number(last.revision),
      });
    // Upcast as every fold reads them; the events auditors read (getEvents) stay as stored.
    const state = fold(events.flatMap((e) => toEnvelope(e) ?? []));
    return { conversationId: q.conversationId, revision: Number(last.revision), position: last.position, state };
  }

  async verify(principal: Principal, conversationId: string) {
    requireRoles(principal, ['auditor', 'admin']);
    const result = await this.store.verifyStream(streamIdOf(conversationId));
    return {
      conversationId,
      ok: result.ok,
      checked: result.checked,
      firstBadRevision: result.firstBadRevision === undefined ? null : Number(result.firstBadRevision),
      reason: result.reason ?? null,
    };
  }

  async getGlobalFeed(principal: Principal, q: FeedQuery) {
    requireRoles(principal, ['auditor', 'admin']);
    const events = await this.store.readAll({ fromPosition: q.fromPosition, maxCount: q.limit });
    return { events: events.map(eventView), nextPosition: events.at(-1)?.position ?? q.fromPosition ?? null };
  }

  /** NOT_FOUND unless the conversation exists and the caller may read it. */
  async assertReadable(principal: Principal, conversationId: string): Promise<void> {
    const [stored] = await this.store.readStream(streamIdOf(conversationId), { maxCount: 1 });
    const first = stored && toEnvelope(stored);
    const owner = first?.type === 'ConversationStarted' ? first.data.owner : '';
    assertCanRead(principal, owner, { type: 'Conversation', id: conversationId });
  }
}

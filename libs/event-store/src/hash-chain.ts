import { createHash } from 'node:crypto';
import { canonicalJsonOf } from './canonical-json';
import type { RecordedEvent, VerifyResult } from './event-store.port';

/** The prevHash of a stream's first event. */
export const GENESIS_HASH = '0'.repeat(64);

export interface CanonicalEventParts {
  streamId: string;
  revision: bigint;
  eventId: string;
  type: string;
  schemaVersion: number;
  /** Canonical JSON texts (see canonicalJson). */
  dataJson: string;
  metadataJson: string;
}

/**
 * The canonical event: {data, eventId, metadata, revision, schemaVersion, streamId, type} with
 * keys in sorted order and no whitespace. Built by concatenation so the PostgreSQL function
 * es_append can build the very same bytes.
 */
export function canonicalEvent(e: CanonicalEventParts): string {
  return (
    `{"data":${e.dataJson},"eventId":${JSON.stringify(e.eventId)},"metadata":${e.metadataJson},` +
    `"revision":${e.revision},"schemaVersion":${e.schemaVersion},"streamId":${JSON.stringify(e.streamId)},` +
    `"type":${JSON.stringify(e.type)}}`
  );
}

export function chainHash(prevHash: string, canonical: string): string {
  return createHash('sha256').update(prevHash).update(canonical).digest('hex');
}

/** Recomputes a recorded event's hash from its content. */
export function hashOfRecorded(prevHash: string, event: RecordedEvent): string {
  return chainHash(
    prevHash,
    canonicalEvent({
      streamId: event.streamId,
      revision: event.revision,
      eventId: event.eventId,
      type: event.type,
      schemaVersion: event.schemaVersion,
      dataJson: canonicalJsonOf(event.data),
      metadataJson: canonicalJsonOf(event.metadata),
    }),
  );
}

/**
 * Walks a stream's events in revision order, page by page, and stops at the first event
 * whose links or content do not match. `anchor` is the prevHash expected of the first event
 * (genesis for a stream read from its start).
 */
export class ChainVerifier {
  private expectedPrev: string;
  private checked = 0;
  private failure: { revision: bigint; reason: string } | null = null;

  constructor(anchor: string = GENESIS_HASH) {
    this.expectedPrev = anchor;
  }

  /** False once a break was found; later events are then ignored. */
  check(event: RecordedEvent): boolean {
    if (this.failure) return false;
    this.checked++;
    if (event.prevHash !== this.expectedPrev) {
      this.failure = { revision: event.revision, reason: 'prevHash does not match the previous event' };
      return false;
    }
    if (hashOfRecorded(event.prevHash, event) !== event.hash) {
      this.failure = { revision: event.revision, reason: 'content does not match its hash' };
      return false;
    }
    this.expectedPrev = event.hash;
    return true;
  }

  result(): VerifyResult {
    return this.failure
      ? { ok: false, checked: this.checked, firstBadRevision: this.failure.revision, reason: this.failure.reason }
      : { ok: true, checked: this.checked };
  }
}

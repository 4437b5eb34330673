import { createHash, createHmac } from 'node:crypto';
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

/**
 * A keyed event's hash: `hmac:` and the HMAC-SHA256 of the same input under EVENT_CHAIN_KEY.
 * The kind is in the hash itself, so streams written before the key keep verifying as they are.
 */
export const KEYED_PREFIX = 'hmac:';

export const isKeyed = (hash: string): boolean => hash.startsWith(KEYED_PREFIX);

/** sha-256 of prevHash and the canonical event; with a key, its HMAC-SHA256, marked `hmac:`. */
export function chainHash(prevHash: string, canonical: string, key: Buffer | null = null): string {
  if (key) return KEYED_PREFIX + createHmac('sha256', key).update(prevHash).update(canonical).digest('hex');
  return createHash('sha256').update(prevHash).update(canonical).digest('hex');
}

/**
 * HMAC's padded keys, which es_append combines with sha256() to compute the very same HMAC in SQL
 * (HMAC(K, m) = H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m))); the key itself is kept outside the database.
 */
export function hmacPads(key: Buffer): { inner: Buffer; outer: Buffer } {
  const block = Buffer.alloc(64);
  (key.length > 64 ? createHash('sha256').update(key).digest() : key).copy(block);
  return { inner: Buffer.from(block.map((b) => b ^ 0x36)), outer: Buffer.from(block.map((b) => b ^ 0x5c)) };
}

/** A 256-bit key given as 64 hex or 44 base64 characters. */
export function parseChainKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('EVENT_CHAIN_KEY must be 256 bits (64 hex or 44 base64 characters)');
  return key;
}

/** Recomputes a recorded event's hash from its content, keyed when its stored hash is. */
export function hashOfRecorded(prevHash: string, event: RecordedEvent, key: Buffer | null = null): string {
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
    isKeyed(event.hash) ? key : null,
  );
}

export interface ChainOptions {
  /** EVENT_CHAIN_KEY: checks keyed events; without it a keyed event cannot be verified. */
  key?: Buffer | null;
  /** Refuse unkeyed events: for stores keyed from their first event, where an unkeyed one is a rewrite. */
  requireKeyed?: boolean;
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

  constructor(
    anchor: string = GENESIS_HASH,
    private readonly options: ChainOptions = {},
  ) {
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
    const reason = this.kindProblem(event.hash);
    if (reason) {
      this.failure = { revision: event.revision, reason };
      return false;
    }
    if (hashOfRecorded(event.prevHash, event, this.options.key ?? null) !== event.hash) {
      this.failure = { revision: event.revision, reason: 'content does not match its hash' };
      return false;
    }
    this.expectedPrev = event.hash;
    return true;
  }

  /** A keyed chain never turns unkeyed: whoever rewrites without the key could only write unkeyed events. */
  private kindProblem(hash: string): string | null {
    if (isKeyed(hash)) return this.options.key ? null : 'the event is keyed: verifying it needs EVENT_CHAIN_KEY';
    if (this.options.requireKeyed) return 'the event is not keyed, and keyed events are required';
    if (isKeyed(this.expectedPrev)) return 'an unkeyed event follows keyed ones';
    return null;
  }

  result(): VerifyResult {
    return this.failure
      ? { ok: false, checked: this.checked, firstBadRevision: this.failure.revision, reason: this.failure.reason }
      : { ok: true, checked: this.checked };
  }
}

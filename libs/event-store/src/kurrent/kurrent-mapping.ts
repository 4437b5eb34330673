import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  eventTypeFilter,
  streamNameFilter,
  type AppendStreamState,
  type Filter,
  type Position,
  type RecordedEvent as EsdbRecordedEvent,
} from '@kurrent/kurrentdb-client';
import { DomainError } from '@parley/core';
import { EventTooLarge, StreamDeleted, StreamNotFound, WrongExpectedVersion } from '../errors';
import type { EventFilter, ExpectedState, RecordedEvent } from '../event-store.port';
import { esdbPosition, parsePosition } from '../position';
import { categoryOf } from '../prepare-events';

/** Where the adapter keeps its own fields inside a KurrentDB event's metadata. */
export const ENVELOPE_KEY = '$parley';

interface Envelope {
  schemaVersion: number;
  prevHash: string;
  hash: string;
}

export function toStreamState(expected: ExpectedState): AppendStreamState {
  if (typeof expected === 'bigint') return expected;
  return expected === 'no_stream' ? NO_STREAM : expected === 'stream_exists' ? STREAM_EXISTS : ANY;
}

export const encodePosition = (position: Position): string => esdbPosition(position.commit, position.prepare);

export function decodePosition(position: string): Position {
  const parsed = parsePosition(position);
  if (parsed.kind !== 'esdb') {
    throw DomainError.validation(
      [{ path: 'position', message: 'expected esdb:<commit>:<prepare>' }],
      `'${position}' is not a KurrentDB position.`,
    );
  }
  return { commit: parsed.commit, prepare: parsed.prepare };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * KurrentDB filters on one field per read: categories go to the server as a stream-name
 * regex (or, without categories, types as an event-type regex); the rest is filtered here.
 */
export function toServerFilter(filter: EventFilter | undefined): Filter {
  if (filter?.categories?.length) {
    return streamNameFilter({ regex: `^(${filter.categories.map(escapeRegex).join('|')})(-|$)` });
  }
  if (filter?.eventTypes?.length) {
    return eventTypeFilter({ regex: `^(${filter.eventTypes.map(escapeRegex).join('|')})$` });
  }
  return eventTypeFilter({ regex: '^[^$]' });
}

export function matches(filter: EventFilter | undefined, event: RecordedEvent): boolean {
  if (event.type.startsWith('$') || event.streamId.startsWith('$')) return false;
  if (filter?.categories?.length && !filter.categories.includes(event.category)) return false;
  if (filter?.eventTypes?.length && !filter.eventTypes.includes(event.type)) return false;
  return true;
}

export function wrapMetadata(metadata: Record<string, unknown>, envelope: Envelope): Record<string, unknown> {
  return { ...metadata, [ENVELOPE_KEY]: envelope };
}

export function fromEsdbEvent(event: EsdbRecordedEvent, fallback?: Position): RecordedEvent {
  const raw = (event.metadata ?? {}) as Record<string, unknown>;
  const { [ENVELOPE_KEY]: envelope, ...metadata } = raw;
  const parley = (envelope ?? {}) as Partial<Envelope>;
  const position = event.position ?? fallback;
  return {
    streamId: event.streamId,
    category: categoryOf(event.streamId),
    revision: event.revision,
    position: position ? encodePosition(position) : esdbPosition(0n, 0n),
    eventId: event.id,
    type: event.type,
    schemaVersion: parley.schemaVersion ?? 1,
    data: event.data,
    metadata,
    createdAt: event.created,
    prevHash: parley.prevHash ?? '',
    hash: parley.hash ?? '',
  };
}

interface KurrentErrorShape {
  type?: string;
  message?: string;
  actualState?: bigint | string;
  size?: number;
  maxSize?: number;
  maxAppendSize?: number;
}

/** Translates the client's errors into the store's typed errors, once, here. */
export function translateKurrentError(err: unknown, streamId: string, expected: ExpectedState = 'any'): unknown {
  const e = (err ?? {}) as KurrentErrorShape;
  switch (e.type) {
    case 'wrong-expected-version':
      return new WrongExpectedVersion(
        streamId,
        expected,
        typeof e.actualState === 'bigint' ? e.actualState : 'no_stream',
      );
    case 'stream-not-found':
      return new StreamNotFound(streamId);
    case 'stream-deleted':
    case 'stream-tombstoned':
      return new StreamDeleted(streamId);
    case 'maximum-append-size-exceeded':
    case 'append-record-size-exceeded':
      return new EventTooLarge('(batch)', e.size ?? 0, e.maxSize ?? e.maxAppendSize ?? 0);
    case 'unavailable':
    case 'deadline-exceeded':
    case 'timeout':
    case 'not-leader':
      return new DomainError('SERVICE_UNAVAILABLE', `KurrentDB is unavailable: ${e.message ?? e.type}`);
    default:
      return err;
  }
}

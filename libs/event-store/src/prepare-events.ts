import type { FieldProblem } from '@parley/core';
import { canonicalJson } from './canonical-json';
import { EventTooLarge, InvalidEvent } from './errors';
import type { EventToAppend } from './event-store.port';

/** An event checked and serialised for storage. */
export interface PreparedEvent {
  eventId: string;
  type: string;
  schemaVersion: number;
  /** Canonical JSON texts: what is stored and what is hashed. */
  dataJson: string;
  metadataJson: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The part of a stream id before the first '-'. */
export const categoryOf = (streamId: string): string => {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
};

/**
 * Checks a batch before anything touches storage: a refused batch throws InvalidEvent
 * (every problem, with its path) or EventTooLarge, and nothing is written.
 */
export function prepareEvents(streamId: string, events: EventToAppend[], maxEventBytes: number): PreparedEvent[] {
  const problems: FieldProblem[] = [];
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.includes('\u0000')) {
    problems.push({ path: 'streamId', message: 'expected a non-empty string' });
  }
  if (!Array.isArray(events) || events.length === 0) {
    throw new InvalidEvent([...problems, { path: 'events', message: 'expected at least one event' }]);
  }
  const seen = new Set<string>();
  const prepared = events.map((event, i): PreparedEvent => {
    const at = `events[${i}]`;
    const eventId = typeof event?.eventId === 'string' ? event.eventId.toLowerCase() : '';
    if (!UUID.test(eventId)) problems.push({ path: `${at}.eventId`, message: 'expected a UUID' });
    else if (seen.has(eventId)) problems.push({ path: `${at}.eventId`, message: 'appears twice in the batch' });
    seen.add(eventId);
    if (typeof event?.type !== 'string' || event.type.length === 0 || event.type.includes('\u0000')) {
      problems.push({ path: `${at}.type`, message: 'expected a non-empty string' });
    }
    const schemaVersion = event?.schemaVersion ?? 1;
    if (!Number.isInteger(schemaVersion) || schemaVersion < 1 || schemaVersion > 2 ** 31 - 1) {
      problems.push({ path: `${at}.schemaVersion`, message: 'expected a whole number of at least 1' });
    }
    const metadata = event?.metadata ?? {};
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      problems.push({ path: `${at}.metadata`, message: 'expected an object' });
    }
    const dataJson = canonicalJson(event?.data, `${at}.data`, problems) ?? '';
    const metadataJson = canonicalJson(metadata, `${at}.metadata`, problems) ?? '';
    return { eventId, type: event?.type, schemaVersion, dataJson, metadataJson };
  });
  if (problems.length > 0) throw new InvalidEvent(problems);
  for (const event of prepared) {
    const bytes = Buffer.byteLength(event.dataJson) + Buffer.byteLength(event.metadataJson);
    if (bytes > maxEventBytes) throw new EventTooLarge(event.eventId, bytes, maxEventBytes);
  }
  return prepared;
}

import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  type RecordedEvent as EsdbRecordedEvent,
} from '@kurrent/kurrentdb-client';
import { DomainError } from '@parley/core';
import { EventTooLarge, StreamDeleted, StreamNotFound, WrongExpectedVersion } from '../errors';
import { comparePositions } from '../position';
import { fromKurrentMetadata, toKurrentMetadata } from './kurrent-metadata';
import {
  decodePosition,
  encodePosition,
  fromEsdbEvent,
  matches,
  toServerFilter,
  toStreamState,
  translateKurrentError,
  wrapMetadata,
} from './kurrent-mapping';

describe('KurrentDB mapping', () => {
  it('maps each expected state to the client stream state', () => {
    expect(toStreamState('any')).toBe(ANY);
    expect(toStreamState('no_stream')).toBe(NO_STREAM);
    expect(toStreamState('stream_exists')).toBe(STREAM_EXISTS);
    expect(toStreamState(41n)).toBe(41n);
  });

  it('encodes positions as esdb:<commit>:<prepare> and decodes them back', () => {
    const position = { commit: 18446744073709551000n, prepare: 7n };
    expect(encodePosition(position)).toBe('esdb:18446744073709551000:7');
    expect(decodePosition(encodePosition(position))).toEqual(position);
    expect(comparePositions('esdb:10:9', 'esdb:10:10')).toBeLessThan(0);
    expect(comparePositions('esdb:11:0', 'esdb:10:10')).toBeGreaterThan(0);
    expect(() => decodePosition('pg:1:2')).toThrow(/not a KurrentDB position/);
  });

  it('translates a wrong expected version, naming the actual revision or no stream', () => {
    const err = new WrongExpectedVersionError(undefined, { streamName: 's-1', expected: 3n, current: 5n });
    expect(translateKurrentError(err, 's-1', 3n)).toEqual(new WrongExpectedVersion('s-1', 3n, 5n));
    const none = new WrongExpectedVersionError(undefined, { streamName: 's-1', expected: 0n, current: NO_STREAM });
    expect(translateKurrentError(none, 's-1', 0n)).toMatchObject({ actual: 'no_stream', code: 'CONCURRENCY_CONFLICT' });
  });

  it('translates not-found, deleted, size and availability errors; passes others through', () => {
    expect(translateKurrentError(new StreamNotFoundError(undefined, 's-2'), 's-2')).toBeInstanceOf(StreamNotFound);
    expect(translateKurrentError(StreamDeletedError.fromStreamName('s-3'), 's-3')).toBeInstanceOf(StreamDeleted);
    expect(translateKurrentError({ type: 'maximum-append-size-exceeded', maxAppendSize: 10 }, 's')).toBeInstanceOf(
      EventTooLarge,
    );
    expect(translateKurrentError(new UnavailableError(), 's')).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const other = new Error('boom');
    expect(translateKurrentError(other, 's')).toBe(other);
    expect(translateKurrentError(new UnavailableError(), 's')).toBeInstanceOf(DomainError);
  });

  it('sends categories to the server as a stream-name regex and filters types locally', () => {
    expect(toServerFilter({ categories: ['order', 'a.b'] })).toMatchObject({
      filterOn: 'streamName',
      regex: '^(order|a\\.b)(-|$)',
    });
    expect(toServerFilter({ eventTypes: ['Placed'] })).toMatchObject({ filterOn: 'eventType', regex: '^(Placed)$' });
    const event = fromEsdbEvent(esdbEvent());
    expect(matches({ categories: ['order'], eventTypes: ['Placed'] }, event)).toBe(true);
    expect(matches({ categories: ['order'], eventTypes: ['Other'] }, event)).toBe(false);
    expect(matches(undefined, { ...event, type: '$metadata' })).toBe(false);
  });

  it('keeps schema version and hashes in a metadata envelope, hidden from readers', () => {
    const event = fromEsdbEvent(esdbEvent());
    expect(event).toMatchObject({
      streamId: 'order-1',
      category: 'order',
      revision: 4n,
      position: 'esdb:100:90',
      schemaVersion: 2,
      metadata: { correlationId: 'c' },
      prevHash: 'p',
      hash: 'h',
    });
  });

  it('round-trips stream metadata through KurrentDB names', () => {
    const metadata = { maxCount: 5, maxAgeSeconds: 60, truncateBefore: 3n, custom: { owner: 'x' } };
    expect(toKurrentMetadata(metadata)).toEqual({ maxCount: 5, maxAge: 60, truncateBefore: 3, owner: 'x' });
    expect(fromKurrentMetadata(toKurrentMetadata(metadata))).toEqual(metadata);
    expect(fromKurrentMetadata({})).toBeNull();
  });
});

function esdbEvent(): EsdbRecordedEvent {
  return {
    streamId: 'order-1',
    id: '0190f1e2-0000-7000-8000-000000000001',
    isJson: true,
    revision: 4n,
    type: 'Placed',
    created: new Date(0),
    data: { n: 1 },
    metadata: wrapMetadata({ correlationId: 'c' }, { schemaVersion: 2, prevHash: 'p', hash: 'h' }) as never,
    position: { commit: 100n, prepare: 90n },
  } as EsdbRecordedEvent;
}

import { DomainError, type FieldProblem } from '@parley/core';
import type { ExpectedState } from './event-store.port';

/** The state a stream is really in, as a WrongExpectedVersion reports it. */
export type ActualState = bigint | 'no_stream';

const describeState = (state: ExpectedState | ActualState): string =>
  typeof state === 'bigint' ? `revision ${state}` : state === 'any' ? 'any state' : state.replace('_', ' ');

/** The stream is not in the state the caller expected: someone else appended first. */
export class WrongExpectedVersion extends DomainError {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedState,
    readonly actual: ActualState,
  ) {
    super(
      'CONCURRENCY_CONFLICT',
      `Stream '${streamId}' was expected at ${describeState(expected)} but is at ${describeState(actual)}.`,
      { streamId, expected: String(expected), actual: String(actual) },
    );
    this.name = 'WrongExpectedVersion';
  }
}

export class StreamNotFound extends DomainError {
  constructor(readonly streamId: string) {
    super('NOT_FOUND', `Stream '${streamId}' was not found.`, { streamId });
    this.name = 'StreamNotFound';
  }
}

/** The stream was tombstoned (hard-deleted): it can be neither read nor written again. */
export class StreamDeleted extends DomainError {
  constructor(readonly streamId: string) {
    super('CONFLICT', `Stream '${streamId}' was permanently deleted; it cannot be read or appended to.`, {
      streamId,
    });
    this.name = 'StreamDeleted';
  }
}

/** Some of the batch's event ids are already in the stream, but not as this batch at this revision. */
export class DuplicateEventIds extends DomainError {
  constructor(
    readonly streamId: string,
    readonly eventIds: string[],
  ) {
    super(
      'IDEMPOTENCY_KEY_REUSED',
      `Stream '${streamId}' already holds event ids ${eventIds.join(', ')} in a different batch or position.`,
      { streamId, eventIds },
    );
    this.name = 'DuplicateEventIds';
  }
}

/** An event or its stream id is not storable: not JSON, bad ids, empty type... */
export class InvalidEvent extends DomainError {
  constructor(readonly problems: FieldProblem[]) {
    super(
      'VALIDATION_FAILED',
      `The events cannot be stored: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
      {
        problems,
      },
    );
    this.name = 'InvalidEvent';
  }
}

export class EventTooLarge extends DomainError {
  constructor(
    readonly eventId: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super('PAYLOAD_TOO_LARGE', `Event '${eventId}' is ${bytes} bytes of JSON; the limit is ${maxBytes} bytes.`, {
      eventId,
      bytes,
      maxBytes,
    });
    this.name = 'EventTooLarge';
  }
}

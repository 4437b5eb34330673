import { CONVERSATION_CATEGORY, conversationIdOf } from '@parley/domain';
import { runSubscription, type GlobalFeed, type RecordedEvent, type SubscriptionRunner } from '@parley/event-store';
import { eventView } from '@parley/read-models';
import { ErrorCode, nanos, type NatsConnection } from 'nats';
import type { Pool } from 'pg';
import { JetStreamBatch } from './jetstream-batch';

export const RELAY_SUBSCRIPTION_ID = 'integration-relay';

/** JetStream's stream of integration events for a prefix: `parley` -> `PARLEY_EVENTS`. */
export const integrationStreamName = (prefix: string): string =>
  `${prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_EVENTS`;

export const integrationSubject = (prefix: string, e: Pick<RecordedEvent, 'type' | 'streamId'>): string =>
  `${prefix}.evt.${e.type}.${conversationIdOf(e.streamId)}`;

const encoder = new TextEncoder();
// How long JetStream remembers message ids: a batch re-published within it is dropped as duplicates.
const DUPLICATE_WINDOW_MS = 10 * 60_000;
// Room kept under max_payload for the message's headers (its Nats-Msg-Id).
const HEADER_ROOM = 512;
// The server's default max_payload, used until the connection has reported its own.
const DEFAULT_NATS_MAX_PAYLOAD = 1_048_576;
// After a wake-up, how long the relay waits before reading, so that a turn's appends go as one batch.
const COALESCE_MS = 15;
// Events sent ahead of the oldest ack awaited.
const SEND_WINDOW = 32;
// JetStream's "message size exceeds maximum allowed" (a stream's max_msg_size).
const JS_MESSAGE_TOO_LARGE = 10054;

/** JetStream's stream of dead letters for a prefix: `parley` -> `PARLEY_DLQ`. */
export const deadLetterStreamName = (prefix: string): string =>
  `${prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_DLQ`;

export const deadLetterSubject = (prefix: string, e: Pick<RecordedEvent, 'type' | 'streamId'>): string =>
  `${prefix}.dlq.evt.${e.type}.${conversationIdOf(e.streamId)}`;

/** Creates the JetStream stream capturing `<prefix>.evt.>` unless it exists. */
export async function ensureIntegrationStream(nats: NatsConnection, prefix: string): Promise<string> {
  const jsm = await nats.jetstreamManager();
  const name = integrationStreamName(prefix);
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams.add({ name, subjects: [`${prefix}.evt.>`], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
  }
  return name;
}

/** Creates the JetStream stream of dead letters, `<prefix>.dlq.>`, unless it exists. */
export async function ensureDeadLetterStream(nats: NatsConnection, prefix: string): Promise<string> {
  const jsm = await nats.jetstreamManager();
  const name = deadLetterStreamName(prefix);
  try {
    await jsm.streams.info(name);
  } catch {
    await jsm.streams.add({ name, subjects: [`${prefix}.dlq.>`], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
  }
  return name;
}

/**
 * What the relay publishes for an event too large for NATS: the event without its `data`, and
 * where to read the whole of it over HTTP (`GET <href>`, the conversation's events from its revision).
 */
export function trimmedEventView(e: RecordedEvent, bytes: number) {
  const { data: _data, ...rest } = eventView(e);
  return {
    ...rest,
    data: null,
    trimmed: {
      reason: 'max_payload',
      bytes,
      href: `/api/v1/conversations/${conversationIdOf(e.streamId)}/events?fromRevision=${Number(e.revision)}&limit=1`,
    },
  };
}

/** NATS or JetStream refused the message for its size: publishing it again cannot help. */
function isTooLarge(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: unknown } };
  return e?.code === ErrorCode.MaxPayloadExceeded || e?.api_error?.err_code === JS_MESSAGE_TOO_LARGE;
}

export interface RelayOptions {
  pool: Pool;
  feed: GlobalFeed;
  nats: NatsConnection;
  prefix: string;
  pollMs?: number;
  onError?(err: unknown): void;
  /** An event NATS refused for its size even trimmed, published to `<prefix>.dlq.evt.…` instead. */
  onDeadLetter?(e: RecordedEvent, err: unknown): void;
}

/**
 * Publishes every stored conversation event to JetStream on `<prefix>.evt.<type>.<conversationId>`,
 * with the event id as message id. An event over the connection's max_payload is published
 * trimmed (`trimmedEventView`); one refused even so goes to the dead letters (`<prefix>.dlq.>`).
 * A checkpointed subscription: each batch is sent in feed order, every ack awaited, and only then
 * is the checkpoint committed — at least once, in order per conversation, resumable; a batch
 * published twice after a crash is deduplicated by JetStream. The one way to break the order: a
 * JetStream that refuses one event of a batch for a passing reason (a stream limit with
 * `discard: new`) yet stores the next; the retry then stores the refused one after it.
 */
export async function runIntegrationRelay(options: RelayOptions): Promise<SubscriptionRunner> {
  const { pool, feed, nats, prefix, pollMs, onError, onDeadLetter } = options;
  // After a failed batch (or a failed look at start) the streams are looked for again before the
  // retry: a NATS server restarted without its JetStream store has lost them, and every publish
  // would fail until they are there.
  const ensureStreams = async () => {
    await ensureIntegrationStream(nats, prefix);
    await ensureDeadLetterStream(nats, prefix);
  };
  let streamKnown = await ensureStreams().then(
    () => true,
    (err: unknown) => {
      onError?.(err);
      return false;
    },
  );

  /**
   * Sends one event, whole when it fits NATS's max_payload, else trimmed to a pointer, and returns
   * JetStream's ack to come. A message that NATS or JetStream then refuses for its size becomes a
   * dead letter (`deadLetter`), so the events after it go on.
   */
  const send = (js: JetStreamBatch, e: RecordedEvent) => {
    const whole = encoder.encode(JSON.stringify(eventView(e)));
    const maxPayload = nats.info?.max_payload ?? DEFAULT_NATS_MAX_PAYLOAD;
    const data =
      whole.length + HEADER_ROOM <= maxPayload
        ? whole
        : encoder.encode(JSON.stringify(trimmedEventView(e, whole.length)));
    const ack = js.publish(integrationSubject(prefix, e), data, e.eventId);
    // Awaited in order below; until then a refusal must not count as unhandled.
    ack.catch(() => undefined);
    return { e, bytes: whole.length, ack };
  };
  const deadLetter = async (js: JetStreamBatch, e: RecordedEvent, bytes: number, err: unknown): Promise<void> => {
    const letter = {
      reason: 'too_large',
      error: err instanceof Error ? err.message : String(err),
      bytes,
      event: trimmedEventView(e, bytes),
    };
    await js.publish(deadLetterSubject(prefix, e), encoder.encode(JSON.stringify(letter)), e.eventId);
    onDeadLetter?.(e, err);
  };

  return runSubscription({
    pool,
    feed,
    subscriptionId: `${RELAY_SUBSCRIPTION_ID}:${prefix}`,
    filter: { categories: [CONVERSATION_CATEGORY] },
    // At most the read models' pages of 500: a page they are reading serves the relay too.
    batchSize: 200,
    pollMs,
    retryMs: 1000,
    // A turn's appends come a few ms apart: read and published as one batch.
    coalesceMs: COALESCE_MS,
    // The checkpoint commits without waiting for its WAL flush: a database crash that loses its
    // last moves has the relay publish those events again, and JetStream drops them as duplicates.
    synchronousCommit: false,
    // Published before the checkpoint moves, outside any transaction: a batch published again
    // after a failed move is dropped by JetStream's duplicate window (msgID = event id). Events
    // are sent in feed order on one connection, which JetStream stores in that order, with up to
    // SEND_WINDOW acks awaited at a time, oldest first: a turn's events cost one round trip rather
    // than one each, and a long backlog is sent a window at a time, between which the process
    // does its other work.
    async react(events) {
      if (!streamKnown) await ensureStreams();
      streamKnown = false;
      const js = new JetStreamBatch(nats);
      const inFlight: ReturnType<typeof send>[] = [];
      const settleOldest = async () => {
        const { e, bytes, ack } = inFlight.shift()!;
        try {
          await ack;
        } catch (err) {
          if (!isTooLarge(err)) throw err;
          await deadLetter(js, e, bytes, err);
        }
      };
      try {
        for (const e of events) {
          if (inFlight.length === SEND_WINDOW) await settleOldest();
          inFlight.push(send(js, e));
        }
        while (inFlight.length > 0) await settleOldest();
      } finally {
        js.close();
      }
      streamKnown = true;
    },
    onError,
  });
}

import { CONVERSATION_CATEGORY, conversationIdOf } from '@parley/domain';
import { runSubscription, type GlobalFeed, type RecordedEvent, type SubscriptionRunner } from '@parley/event-store';
import { eventView } from '@parley/read-models';
import { nanos, type NatsConnection } from 'nats';
import type { Pool } from 'pg';

export const RELAY_SUBSCRIPTION_ID = 'integration-relay';

/** JetStream's stream of integration events for a prefix: `parley` -> `PARLEY_EVENTS`. */
export const integrationStreamName = (prefix: string): string =>
  `${prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_EVENTS`;

export const integrationSubject = (prefix: string, e: Pick<RecordedEvent, 'type' | 'streamId'>): string =>
  `${prefix}.evt.${e.type}.${conversationIdOf(e.streamId)}`;

const encoder = new TextEncoder();
// How long JetStream remembers message ids: a batch re-published within it is dropped as duplicates.
const DUPLICATE_WINDOW_MS = 10 * 60_000;

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

export interface RelayOptions {
  pool: Pool;
  feed: GlobalFeed;
  nats: NatsConnection;
  prefix: string;
  pollMs?: number;
  onError?(err: unknown): void;
}

/**
 * Publishes every stored conversation event to JetStream on `<prefix>.evt.<type>.<conversationId>`,
 * with the event id as message id. A checkpointed subscription: each batch is published in
 * feed order, every ack awaited, and only then is the checkpoint committed — at least once, in
 * order per conversation, resumable; a batch published twice after a crash is deduplicated by
 * JetStream.
 */
export async function runIntegrationRelay(options: RelayOptions): Promise<SubscriptionRunner> {
  const { pool, feed, nats, prefix, pollMs, onError } = options;
  // After a failed batch (or a failed look at start) the stream is looked for again before the
  // retry: a NATS server restarted without its JetStream store has lost it, and every publish
  // would fail until it is there.
  let streamKnown = await ensureIntegrationStream(nats, prefix).then(
    () => true,
    (err: unknown) => {
      onError?.(err);
      return false;
    },
  );
  const js = nats.jetstream();
  return runSubscription({
    pool,
    feed,
    subscriptionId: `${RELAY_SUBSCRIPTION_ID}:${prefix}`,
    filter: { categories: [CONVERSATION_CATEGORY] },
    batchSize: 200,
    pollMs,
    retryMs: 1000,
    async handle(events) {
      if (!streamKnown) await ensureIntegrationStream(nats, prefix);
      streamKnown = false;
      for (const e of events)
        await js.publish(integrationSubject(prefix, e), encoder.encode(JSON.stringify(eventView(e))), {
          msgID: e.eventId,
        });
      streamKnown = true;
    },
    onError,
  });
}

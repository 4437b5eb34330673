import type { NatsLink } from '@parley/platform';
import type { Subscription } from 'nats';
import type { LiveDelta, LiveDeltaListener, LiveDeltas } from './live-deltas.port';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Live deltas across processes over core NATS (`<prefix>.live.<conversationId>`): a worker in
 * one process reaches the SSE clients of every query-api. Core NATS, not JetStream: a delta
 * nobody listens to is worth nothing, and the stored ChunksReceived event carries the text anyway.
 * Before NATS has first answered, deltas are dropped and subscriptions wait for it.
 */
export class NatsLiveDeltas implements LiveDeltas {
  constructor(
    private readonly link: NatsLink,
    private readonly prefix: string,
  ) {}

  subjectOf(conversationId: string): string {
    return `${this.prefix}.live.${conversationId}`;
  }

  publish(conversationId: string, delta: LiveDelta): void {
    const nats = this.link.connection;
    if (!nats || nats.isClosed()) return;
    try {
      nats.publish(this.subjectOf(conversationId), encoder.encode(JSON.stringify(delta)));
    } catch {
      // A draining or reconnecting connection refuses publishes; the stored chunks still follow.
    }
  }

  subscribe(conversationId: string, listener: LiveDeltaListener): () => void {
    let subscription: Subscription | null = null;
    const cancel = this.link.onConnected((nats) => {
      subscription = nats.subscribe(this.subjectOf(conversationId), {
        callback: (err, msg) => {
          if (err) return;
          try {
            listener(JSON.parse(decoder.decode(msg.data)) as LiveDelta);
          } catch {
            // A malformed message from a foreign publisher is dropped.
          }
        },
      });
    });
    return () => {
      cancel();
      subscription?.unsubscribe();
    };
  }
}

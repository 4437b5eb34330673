import type { NatsConnection } from 'nats';
import type { LiveDelta, LiveDeltaListener, LiveDeltas } from './live-deltas.port';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Live deltas across processes over core NATS (`<prefix>.live.<conversationId>`): a worker in
 * one process reaches the SSE clients of every query-api. Core NATS, not JetStream: a delta
 * nobody listens to is worth nothing, and the stored ChunksReceived event carries the text anyway.
 */
export class NatsLiveDeltas implements LiveDeltas {
  constructor(
    private readonly nats: NatsConnection,
    private readonly prefix: string,
  ) {}

  subjectOf(conversationId: string): string {
    return `${this.prefix}.live.${conversationId}`;
  }

  publish(conversationId: string, delta: LiveDelta): void {
    if (this.nats.isClosed()) return;
    try {
      this.nats.publish(this.subjectOf(conversationId), encoder.encode(JSON.stringify(delta)));
    } catch {
      // A draining or reconnecting connection refuses publishes; the stored chunks still follow.
    }
  }

  subscribe(conversationId: string, listener: LiveDeltaListener): () => void {
    const subscription = this.nats.subscribe(this.subjectOf(conversationId), {
      callback: (err, msg) => {
        if (err) return;
        try {
          listener(JSON.parse(decoder.decode(msg.data)) as LiveDelta);
        } catch {
          // A malformed message from a foreign publisher is dropped.
        }
      },
    });
    return () => subscription.unsubscribe();
  }
}

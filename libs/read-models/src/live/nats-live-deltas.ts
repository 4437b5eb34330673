import type { NatsLink } from '@parley/platform';
import type { Subscription } from 'nats';
import type { LiveDelta, LiveDeltaListener, LiveDeltas } from './live-deltas.port';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The same model call's deltas of the same kind, which one delta can carry joined. */
const joinable = (a: LiveDelta, b: LiveDelta): boolean =>
  a.turnNo === b.turnNo &&
  a.callNo === b.callNo &&
  a.attempt === b.attempt &&
  (a.text === undefined) === (b.text === undefined) &&
  (a.reasoning === undefined) === (b.reasoning === undefined);

/**
 * Live deltas across processes over core NATS (`<prefix>.live.<conversationId>`): a worker in
 * one process reaches the SSE clients of every query-api. Core NATS, not JetStream: a delta
 * nobody listens to is worth nothing, and the stored ChunksReceived event carries the text anyway.
 * Before NATS has first answered, deltas are dropped and subscriptions wait for it.
 *
 * The deltas a conversation publishes within one turn of the event loop (a model's reply that
 * arrived in one read) go as one message, their text joined, sent at the end of that turn
 * (setImmediate): a delta per token would be a message and a socket write per token. A reply
 * streamed at a model's pace still goes delta by delta, none of them later than before.
 */
export class NatsLiveDeltas implements LiveDeltas {
  /** The deltas waiting for the end of this turn of the event loop, by conversation: emptied by each send. */
  private readonly pending = new Map<string, LiveDelta[]>();
  private sendScheduled = false;

  constructor(
    private readonly link: NatsLink,
    private readonly prefix: string,
  ) {}

  subjectOf(conversationId: string): string {
    return `${this.prefix}.live.${conversationId}`;
  }

  publish(conversationId: string, delta: LiveDelta): void {
    const queued = this.pending.get(conversationId);
    const last = queued?.at(-1);
    if (last && joinable(last, delta)) {
      if (delta.text !== undefined) last.text += delta.text;
      if (delta.reasoning !== undefined) last.reasoning += delta.reasoning;
    } else if (queued) queued.push({ ...delta });
    else this.pending.set(conversationId, [{ ...delta }]);
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setImmediate(() => this.send());
  }

  private send(): void {
    this.sendScheduled = false;
    const nats = this.link.connection;
    const pending = [...this.pending];
    this.pending.clear();
    if (!nats || nats.isClosed()) return;
    for (const [conversationId, deltas] of pending)
      for (const delta of deltas) {
        try {
          nats.publish(this.subjectOf(conversationId), encoder.encode(JSON.stringify(delta)));
        } catch {
          // A draining or reconnecting connection refuses publishes; the stored chunks still follow.
        }
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

import {
  createInbox,
  headers,
  type Msg,
  type NatsConnection,
  type NatsError,
  type PubAck,
  type Subscription,
} from 'nats';

/** How long an ack may take before its publish fails (the `js.publish` default). */
export const ACK_TIMEOUT_MS = 5_000;

interface Pending {
  resolve(ack: PubAck): void;
  reject(err: unknown): void;
  due: number;
}

/** JetStream's reply to a publish: the ack, or the API error that refused the message. */
interface PubAckReply extends Partial<PubAck> {
  error?: { code: number; err_code?: number; description: string };
}

/**
 * Publishes to JetStream as one batch: each message carries its message id (`Nats-Msg-Id`, for
 * JetStream's duplicate window) and a reply subject under one inbox subscription that the batch
 * opens and `close()` ends; acks are matched by the token that ends their reply subject. This is
 * `js.publish` without its per-message request (a timer each, and an error object built for every
 * ack as the request is put away): half the CPU a message.
 *
 * Failures as `js.publish` reports them: a message over the connection's max_payload rejects with
 * nats.js's `MAX_PAYLOAD_EXCEEDED`; a refusal by JetStream rejects with the API error
 * under `api_error` (its `err_code`); no stream on the subject rejects with code `503`; an ack not
 * there within `timeoutMs` rejects with code `TIMEOUT`. The subscription and the connection are
 * the caller's: SUB and PUB travel in order on the one connection, so no ack can come before its
 * subscription.
 */
export class JetStreamBatch {
  private readonly inbox = createInbox();
  private readonly pending = new Map<string, Pending>();
  private readonly sub: Subscription;
  private next = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly nats: NatsConnection,
    private readonly timeoutMs = ACK_TIMEOUT_MS,
  ) {
    this.sub = nats.subscribe(`${this.inbox}.*`, { callback: (err, msg) => this.settle(err, msg) });
  }

  /** Sends one message; resolves with its ack (a repeat of a known message id: `duplicate`). */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<PubAck> {
    const token = String(this.next++);
    const h = headers();
    h.set('Nats-Msg-Id', msgId);
    try {
      this.nats.publish(subject, data, { reply: `${this.inbox}.${token}`, headers: h });
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const ack = new Promise<PubAck>((resolve, reject) =>
      this.pending.set(token, { resolve, reject, due: Date.now() + this.timeoutMs }),
    );
    this.timer ??= setTimeout(() => this.expire(), this.timeoutMs).unref();
    return ack;
  }

  /** Ends the batch: its subscription goes, and acks still awaited fail. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.sub.isClosed()) this.sub.unsubscribe();
    this.failAll(Object.assign(new Error('the batch of publishes was closed before its ack came'), { code: 'CLOSED' }));
  }

  private settle(err: NatsError | null, msg: Msg): void {
    if (err) return this.failAll(err);
    const token = msg.subject.slice(this.inbox.length + 1);
    const waiting = this.pending.get(token);
    if (!waiting) return;
    this.pending.delete(token);
    if (msg.headers?.hasError) {
      const { code, description } = msg.headers;
      return waiting.reject(
        Object.assign(new Error(`JetStream did not take the message: ${code} ${description}`), { code: String(code) }),
      );
    }
    try {
      const reply = msg.json<PubAckReply>();
      if (reply.error) waiting.reject(Object.assign(new Error(reply.error.description), { api_error: reply.error }));
      else waiting.resolve(reply as PubAck);
    } catch (parseError) {
      waiting.reject(parseError);
    }
  }

  /** Fails the acks past their time (they are awaited oldest first), then waits for the next one's. */
  private expire(): void {
    this.timer = null;
    const now = Date.now();
    for (const [token, waiting] of this.pending) {
      if (waiting.due > now) {
        this.timer = setTimeout(() => this.expire(), waiting.due - now).unref();
        return;
      }
      this.pending.delete(token);
      waiting.reject(
        Object.assign(new Error(`no ack from JetStream within ${this.timeoutMs} ms`), { code: 'TIMEOUT' }),
      );
    }
  }

  private failAll(err: unknown): void {
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }
}

import type { MsgHdrs, NatsConnection, Subscription } from 'nats';
import { ParleyError } from './errors';
import { OPERATIONS, type CommandName, type QueryName } from './operations.generated';
import { FrameQueue } from './queue';
import {
  CLOSING_EVENTS,
  type CallOptions,
  type ParleyTransport,
  type StreamFrame,
  type StreamOptions,
} from './transport';

export interface NatsTransportOptions {
  /** A connection from the `nats` package (`await connect({servers})`); the transport does not close it. */
  connection: NatsConnection;
  /** An API key or a JWT: sent in the `authorization` header of every request. */
  apiKey: string;
  /** Parley's `PARLEY_PREFIX` (default `parley`): subjects `<prefix>.cmd.<name>`, `<prefix>.qry.<name>`. */
  prefix?: string;
  /** How long a request waits for its answer (default 60 s; a turn's `timeoutMs` lengthens it). */
  timeoutMs?: number;
  /** How often a stream reads the conversation's new events (default 250 ms). */
  pollMs?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EVENTS_PAGE = 1000;

interface EventView {
  revision: number;
  type: string;
}

/**
 * Parley over NATS request/reply (docs/api.md): `<prefix>.cmd.<name>` and `<prefix>.qry.<name>`
 * with the operation's input as the JSON payload (`commandId` for idempotency) and the credential
 * in the `authorization` header; the answer is `{result}` or `{error}`. A stream reads the stored
 * events with the `getEvents` query from the revision after the last one it gave (so a resumed
 * stream has no gap and no repeat), and the live deltas from `<prefix>.live.<id>`.
 */
export class NatsTransport implements ParleyTransport {
  readonly prefix: string;
  private headersOf: (() => MsgHdrs) | null = null;

  constructor(private readonly options: NatsTransportOptions) {
    this.prefix = options.prefix ?? 'parley';
  }

  async call(
    name: CommandName | QueryName,
    input: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<{ body: unknown; done: boolean }> {
    const op = OPERATIONS[name];
    if (!op) throw new ParleyError('NOT_FOUND', `No command or query named ${String(name)}`);
    const payload = options.idempotencyKey ? { ...input, commandId: options.idempotencyKey } : input;
    const subject = `${this.prefix}.${op.kind === 'command' ? 'cmd' : 'qry'}.${name}`;
    const waitMs = typeof input.timeoutMs === 'number' ? input.timeoutMs + 10_000 : 0;
    const timeout = Math.max(this.options.timeoutMs ?? 60_000, waitMs);
    const h = await this.headers();
    let answer: { result?: unknown; error?: unknown };
    try {
      const msg = await this.options.connection.request(subject, encoder.encode(JSON.stringify(payload)), {
        timeout,
        headers: h,
      });
      answer = JSON.parse(decoder.decode(msg.data)) as typeof answer;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '503') throw new ParleyError('SERVICE_UNAVAILABLE', `No Parley answers on ${subject}`);
      if (code === 'TIMEOUT') throw new ParleyError('TIMEOUT', `No answer on ${subject} within ${timeout} ms`);
      throw new ParleyError('SERVICE_UNAVAILABLE', `${subject}: ${(err as Error).message}`);
    }
    if (answer.error !== undefined) throw ParleyError.fromBody(answer);
    const body = answer.result ?? null;
    // A turn still running is answered with the command's reply only (HTTP's 202): no usage yet.
    const done = !op.startsTurn || (typeof body === 'object' && body !== null && 'usage' in body);
    return { body, done };
  }

  async *stream(conversationId: string, options: StreamOptions = {}): AsyncGenerator<StreamFrame> {
    const queue = new FrameQueue<StreamFrame>();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let deltas: Subscription | null = null;
    try {
      deltas = this.options.connection.subscribe(`${this.prefix}.live.${conversationId}`, {
        callback: (err, msg) => {
          if (err) return;
          try {
            queue.push({ event: 'delta', data: JSON.parse(decoder.decode(msg.data)) });
          } catch {
            // not Parley's: dropped
          }
        },
      });
      void this.follow(conversationId, (options.after ?? -1) + 1, queue, stop.signal);
      for await (const frame of queue.drain()) {
        if (stop.signal.aborted) return;
        yield frame;
        if (CLOSING_EVENTS.has(frame.event)) return;
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
      deltas?.unsubscribe();
      queue.end();
    }
  }

  /** Reads the stored events from `next` on, page by page, until `signal` stops it or the stream closes. */
  private async follow(conversationId: string, next: number, queue: FrameQueue<StreamFrame>, signal: AbortSignal) {
    try {
      while (!signal.aborted) {
        // A reader that is behind is waited for: the next page is read once it has taken most of this one.
        if (queue.size > EVENTS_PAGE / 2) {
          await sleep(this.options.pollMs ?? 250, signal);
          continue;
        }
        const { body } = await this.call('getEvents', { conversationId, fromRevision: next, limit: EVENTS_PAGE });
        const events = (body ?? []) as EventView[];
        for (const e of events) {
          if (signal.aborted) return;
          queue.push({ event: e.type, id: String(e.revision), data: e });
          next = e.revision + 1;
          if (CLOSING_EVENTS.has(e.type)) return queue.end();
        }
        if (events.length < EVENTS_PAGE) await sleep(this.options.pollMs ?? 250, signal);
      }
    } catch (err) {
      queue.fail(err);
    }
  }

  async close(): Promise<void> {}

  private async headers(): Promise<MsgHdrs> {
    // `nats` is loaded when a NATS transport is used: an HTTP-only client does not need it installed.
    this.headersOf ??= (await import('nats')).headers;
    const h = this.headersOf();
    h.set('authorization', `Bearer ${this.options.apiKey}`);
    return h;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export const natsTransport = (options: NatsTransportOptions): NatsTransport => new NatsTransport(options);

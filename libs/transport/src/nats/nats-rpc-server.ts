import { assertPayloadWithinLimit, type Authenticator, type SubjectRateLimiter } from '@parley/auth';
import { observeNatsRequest, type MetricsService } from '@parley/observability';
import { unavailableError } from '@parley/platform';
import { DomainError, errorBody, type ErrorBody } from '@parley/core';
import type { Msg, NatsConnection, Subscription } from 'nats';
import { invokeMethod, methodOf, type RpcMethods } from './rpc-method';

export interface NatsRpcServerOptions {
  /** `<prefix>.qry` or `<prefix>.cmd`: methods answer on `<root>.<method>`. */
  root: string;
  methods: RpcMethods;
  maxPayloadBytes: number;
  authenticator: Authenticator;
  rateLimiter: SubjectRateLimiter;
  metrics: MetricsService;
  onInternal?(err: unknown): void;
}

// The server's default max_payload, used until the connection has reported its own.
const DEFAULT_NATS_MAX_PAYLOAD = 1_048_576;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * One NATS front door (queries or commands), request-reply over a plain connection: a queue
 * group shares the requests among instances. Each request is size-checked, authenticated
 * from its `authorization` header, rate-limited, parsed and validated with the same schemas as
 * HTTP, and answered `{result}` or the API's `{error}` body. Bad input is answered, never thrown.
 * A request whose reply subject is not an inbox (see isInbox) is dropped unanswered.
 *
 * A request in the packet shape of a NestJS `ClientProxy` (Transport.NATS), `{pattern, data, id}`
 * with `pattern` the subject itself, is answered in kind: `{id, response, isDisposed: true}`, or
 * `{id, err, isDisposed: true}` where `err` is the same `{error}` body, which the client's
 * Observable raises. Its `data` is the payload.
 */
export class NatsRpcServer {
  private subscription: Subscription | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nats: NatsConnection,
    private readonly options: NatsRpcServerOptions,
  ) {}

  start(): this {
    const { root } = this.options;
    this.subscription = this.nats.subscribe(`${root}.*`, {
      queue: root,
      callback: (err, msg) => {
        if (err) return;
        const done = this.answer(msg).finally(() => this.inFlight.delete(done));
        this.inFlight.add(done);
      },
    });
    return this;
  }

  /** Stops taking requests and waits for those under way to be answered. */
  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription && !subscription.isClosed() && !this.nats.isClosed())
      await subscription.drain().catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }

  private get prefix(): string {
    return this.options.root.slice(0, this.options.root.lastIndexOf('.'));
  }

  private async answer(msg: Msg): Promise<void> {
    if (!msg.reply || !isInbox(this.prefix, msg.reply)) return;
    const name = msg.subject.slice(this.options.root.length + 1);
    const subject = `${this.options.root}.${methodOf(this.options.methods, name) ? name : 'unknown'}`;
    // Read even when over NATS_MAX_PAYLOAD_BYTES (NATS's own max_payload bounds it), so that a
    // NestJS client is refused in its own shape; the size is checked before the payload is used.
    const decoded = decodeJson(msg.data);
    const packet = nestPacketOf(decoded, msg.subject);
    const payload: Decoded = packet ? { value: packet.data ?? {} } : decoded;
    let body: unknown;
    try {
      const result = await observeNatsRequest(this.options.metrics, { subject, headers: msg.headers }, () =>
        this.run(name, msg, payload),
      );
      body = packet ? { id: packet.id, response: result, isDisposed: true } : { result };
    } catch (err) {
      const error = this.errorOf(err);
      body = packet ? { id: packet.id, err: error, isDisposed: true } : error;
    }
    try {
      respondWithin(this.nats, msg, body, (tooLarge) =>
        packet ? { id: packet.id, err: errorBody(tooLarge), isDisposed: true } : errorBody(tooLarge),
      );
    } catch (err) {
      this.options.onInternal?.(err);
    }
  }

  private async run(name: string, msg: Msg, payload: Decoded): Promise<unknown> {
    const method = methodOf(this.options.methods, name);
    if (!method)
      throw new DomainError('NOT_FOUND', `There is no method '${name}' on ${this.options.root}.`, {
        subject: msg.subject,
      });
    assertPayloadWithinLimit(msg.data.length, this.options.maxPayloadBytes);
    const principal = await this.options.authenticator.authenticateNatsHeaders(msg.headers);
    return invokeMethod(method, principal, () => valueOf(payload), this.options.rateLimiter);
  }

  private errorOf(err: unknown): ErrorBody {
    if (err instanceof DomainError) return errorBody(err);
    this.options.onInternal?.(err);
    const unavailable = unavailableError(err);
    if (unavailable) return errorBody(unavailable);
    return errorBody(new DomainError('INTERNAL', 'Something went wrong inside Parley; the error was logged.'));
  }
}

/** A payload read as JSON, or why it could not be. An empty payload is `{}`. */
export type Decoded = { value: unknown } | { error: DomainError };

export function decodeJson(data: Uint8Array): Decoded {
  if (data.length === 0) return { value: {} };
  try {
    return { value: JSON.parse(decoder.decode(data)) };
  } catch {
    return {
      error: DomainError.validation(
        [{ path: '', message: 'the payload is not JSON' }],
        'The request payload must be JSON.',
      ),
    };
  }
}

function valueOf(decoded: Decoded): unknown {
  if ('error' in decoded) throw decoded.error;
  return decoded.value;
}

const NEST_PACKET_KEYS = new Set(['pattern', 'data', 'id']);

/**
 * The request as a NestJS ClientProxy sends it over NATS: `{pattern, data, id}` (data left out
 * when undefined), its pattern the subject it was sent to. Anything else is a plain payload.
 */
function nestPacketOf(decoded: Decoded, subject: string): { id: string; data: unknown } | null {
  if (!('value' in decoded)) return null;
  const value = decoded.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const packet = value as Record<string, unknown>;
  if (packet.pattern !== subject || typeof packet.id !== 'string') return null;
  if (!Object.keys(packet).every((key) => NEST_PACKET_KEYS.has(key))) return null;
  return { id: packet.id, data: packet.data };
}

/**
 * A reply subject must be the requester's inbox: never one of this deployment's own subjects
 * (`<prefix>.live.<id>`, `<prefix>.evt.…`) nor a system one (`$JS.…`), where Parley's answer
 * would pass for a live delta, an integration event or a JetStream call.
 */
export function isInbox(prefix: string, reply: string): boolean {
  return !reply.startsWith('$') && reply !== prefix && !reply.startsWith(`${prefix}.`);
}

/**
 * Answers `msg` with `body` as JSON, or with `tooLarge(error)` when the body is over the
 * connection's max_payload.
 */
export function respondWithin(
  nats: NatsConnection,
  msg: Msg,
  body: unknown,
  tooLarge: (error: DomainError) => unknown,
): void {
  const data = encoder.encode(JSON.stringify(body));
  const maxPayload = nats.info?.max_payload ?? DEFAULT_NATS_MAX_PAYLOAD;
  if (data.length <= maxPayload) {
    msg.respond(data);
    return;
  }
  const error = new DomainError('PAYLOAD_TOO_LARGE', 'The reply is over the NATS payload limit; page the query.', {
    limit: maxPayload,
    actual: data.length,
  });
  msg.respond(encoder.encode(JSON.stringify(tooLarge(error))));
}

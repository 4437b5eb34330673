import { assertPayloadWithinLimit, requireRoles, type Authenticator, type SubjectRateLimiter } from '@parley/auth';
import { observeNatsRequest, type MetricsService } from '@parley/observability';
import { parseOrThrow, unavailableError } from '@parley/platform';
import { DomainError, errorBody } from '@parley/core';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { RpcMethods } from './rpc-method';

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

  private async answer(msg: Msg): Promise<void> {
    if (!msg.reply || !this.isInbox(msg.reply)) return;
    const name = msg.subject.slice(this.options.root.length + 1);
    const method = Object.hasOwn(this.options.methods, name) ? this.options.methods[name] : undefined;
    const subject = `${this.options.root}.${method ? name : 'unknown'}`;
    let body: unknown;
    try {
      body = {
        result: await observeNatsRequest(this.options.metrics, { subject, headers: msg.headers }, () =>
          this.run(name, msg),
        ),
      };
    } catch (err) {
      body = this.errorOf(err);
    }
    this.respond(msg, body);
  }

  /**
   * A reply subject must be the requester's inbox: never one of this deployment's own subjects
   * (`<prefix>.live.<id>`, `<prefix>.evt.…`) nor a system one (`$JS.…`), where Parley's answer
   * would pass for a live delta, an integration event or a JetStream call.
   */
  private isInbox(reply: string): boolean {
    const prefix = this.options.root.slice(0, this.options.root.lastIndexOf('.'));
    return !reply.startsWith('$') && reply !== prefix && !reply.startsWith(`${prefix}.`);
  }

  private async run(name: string, msg: Msg): Promise<unknown> {
    const method = Object.hasOwn(this.options.methods, name) ? this.options.methods[name] : undefined;
    if (!method)
      throw new DomainError('NOT_FOUND', `There is no method '${name}' on ${this.options.root}.`, {
        subject: msg.subject,
      });
    assertPayloadWithinLimit(msg.data.length, this.options.maxPayloadBytes);
    const principal = await this.options.authenticator.authenticateNatsHeaders(msg.headers);
    if (method.roles) requireRoles(principal, method.roles);
    // A turn method awaits the verdict itself, beside its running-turn slot.
    const rateLimit = method.startsTurn ? this.options.rateLimiter.pending(principal.subject) : undefined;
    if (!rateLimit) await this.options.rateLimiter.consume(principal.subject);
    const input = parseOrThrow(method.schema, parseJson(msg.data));
    return method.run(principal, input as never, rateLimit);
  }

  private respond(msg: Msg, body: unknown): void {
    try {
      const data = encoder.encode(JSON.stringify(body));
      const maxPayload = this.nats.info?.max_payload ?? DEFAULT_NATS_MAX_PAYLOAD;
      if (data.length > maxPayload) {
        const tooLarge = new DomainError(
          'PAYLOAD_TOO_LARGE',
          'The reply is over the NATS payload limit; page the query.',
          {
            limit: maxPayload,
            actual: data.length,
          },
        );
        msg.respond(encoder.encode(JSON.stringify(errorBody(tooLarge))));
        return;
      }
      msg.respond(data);
    } catch (err) {
      this.options.onInternal?.(err);
    }
  }

  private errorOf(err: unknown) {
    if (err instanceof DomainError) return errorBody(err);
    this.options.onInternal?.(err);
    const unavailable = unavailableError(err);
    if (unavailable) return errorBody(unavailable);
    return errorBody(new DomainError('INTERNAL', 'Something went wrong inside Parley; the error was logged.'));
  }
}

function parseJson(data: Uint8Array): unknown {
  if (data.length === 0) return {};
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    throw DomainError.validation(
      [{ path: '', message: 'the payload is not JSON' }],
      'The request payload must be JSON.',
    );
  }
}

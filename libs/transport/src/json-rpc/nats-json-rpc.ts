import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { assertPayloadWithinLimit } from '@parley/auth';
import { DomainError } from '@parley/core';
import { observeNatsRequest } from '@parley/observability';
import { unavailableError } from '@parley/platform';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { FrontDoorDeps } from '../nats/nats-front-door';
import { decodeJson, isInbox, respondWithin } from '../nats/nats-rpc-server';
import {
  errorResponse,
  jsonRpcErrorOf,
  parseErrorResponse,
  type JsonRpcDispatcher,
  type JsonRpcReply,
} from './json-rpc';

/**
 * JSON-RPC 2.0 on the NATS subject `<prefix>.rpc` (a queue group shares the requests among
 * instances): the credential in the `authorization` header as on `<prefix>.cmd.*`, the message a
 * request or a batch, the reply its JSON-RPC answer. A message of notifications only is answered
 * with nothing, and may be published without a reply subject. A request that cannot be read
 * (too large, not JSON, no valid credential) is answered with one error whose id is null.
 */
export class NatsJsonRpcDoor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription: Subscription | null = null;
  private nats: NatsConnection | null = null;
  private cancel: (() => void) | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly logger = new Logger('NatsJsonRpcDoor');

  constructor(
    private readonly deps: FrontDoorDeps,
    private readonly dispatcher: JsonRpcDispatcher,
  ) {}

  get subject(): string {
    return `${this.deps.config.prefix}.rpc`;
  }

  onApplicationBootstrap(): void {
    this.cancel = this.deps.nats.onConnected((nats) => {
      this.nats = nats;
      this.subscription = nats.subscribe(this.subject, {
        queue: this.subject,
        callback: (err, msg) => {
          if (err) return;
          const done = this.answer(msg)
            .catch((e: unknown) => this.onInternal(e))
            .finally(() => this.inFlight.delete(done));
          this.inFlight.add(done);
        },
      });
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.cancel?.();
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription && !subscription.isClosed() && !this.nats?.isClosed())
      await subscription.drain().catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
  }

  private async answer(msg: Msg): Promise<void> {
    if (msg.reply && !isInbox(this.deps.config.prefix, msg.reply)) return;
    const reply = await observeNatsRequest(
      this.deps.metrics,
      { subject: this.subject, headers: msg.headers },
      async () => {
        try {
          return await this.run(msg);
        } catch (err) {
          return errorResponse(null, this.errorOf(err));
        }
      },
    );
    if (reply === null || !msg.reply || !this.nats) return;
    respondWithin(this.nats, msg, reply, (tooLarge) => errorResponse(null, jsonRpcErrorOf(tooLarge)));
  }

  private async run(msg: Msg): Promise<JsonRpcReply> {
    assertPayloadWithinLimit(msg.data.length, this.deps.config.nats.maxPayloadBytes);
    const principal = await this.deps.authenticator.authenticateNatsHeaders(msg.headers);
    const decoded = decodeJson(msg.data);
    if ('error' in decoded) return parseErrorResponse();
    return this.dispatcher.dispatch(decoded.value, {
      principal,
      authorization: msg.headers?.get('authorization') || undefined,
    });
  }

  private errorOf(err: unknown) {
    if (err instanceof DomainError) return jsonRpcErrorOf(err);
    this.onInternal(err);
    return jsonRpcErrorOf(
      unavailableError(err) ?? new DomainError('INTERNAL', 'Something went wrong inside Parley; the error was logged.'),
    );
  }

  private onInternal(err: unknown): void {
    this.logger.error(`${this.subject}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
}

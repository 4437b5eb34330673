import { Logger } from '@nestjs/common';
import { BaseRpcContext, Server, type CustomTransportStrategy } from '@nestjs/microservices';
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  type ConnectionOptions,
  type ConsumerMessages,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { lastValueFrom } from 'rxjs';

export interface JetStreamEventsOptions {
  /** How to reach NATS: servers, and the service's own credentials. */
  connection: ConnectionOptions;
  /** Parley's PARLEY_PREFIX: its events are on `<prefix>.evt.<EventType>.<conversationId>`. */
  prefix: string;
  /** The durable consumer's name: one per consuming service; its instances share it. */
  durable: string;
}

/** What `@Ctx()` gives a handler: the JetStream message (subject, headers, delivery count). */
export class JetStreamContext extends BaseRpcContext<[JsMsg]> {
  get message(): JsMsg {
    return this.args[0];
  }
}

/**
 * A NestJS transport strategy that feeds Parley's integration events, read from JetStream by a
 * durable consumer, to `@EventPattern` handlers. A handler's pattern is the subject after the
 * prefix, NATS wildcards allowed: `evt.ConversationCompleted.*`, `evt.>`. A message is acked once
 * its handler is done, and delivered again later when the handler fails, or when the service
 * stops before it is done: a handler may see an event twice (the event's `eventId` tells).
 * Events no handler matches are acked and skipped.
 */
export class JetStreamEvents extends Server implements CustomTransportStrategy {
  private nats: NatsConnection | null = null;
  private messages: ConsumerMessages | null = null;
  private readonly log = new Logger(JetStreamEvents.name);

  constructor(private readonly options: JetStreamEventsOptions) {
    super();
  }

  /** The stream Parley's integration relay publishes to: `parley` → `PARLEY_EVENTS`. */
  get stream(): string {
    return `${this.options.prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_EVENTS`;
  }

  async listen(callback: (err?: unknown) => void): Promise<void> {
    try {
      const { connection, prefix, durable } = this.options;
      this.nats = await connect(connection);
      const jsm = await this.nats.jetstreamManager();
      await jsm.consumers.add(this.stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: `${prefix}.evt.>`,
      });
      const consumer = await this.nats.jetstream().consumers.get(this.stream, durable);
      this.messages = await consumer.consume({ max_messages: 64 });
      void this.deliver(this.messages);
      callback();
    } catch (err) {
      callback(err);
    }
  }

  private async deliver(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      const pattern = this.patternOf(msg.subject.slice(this.options.prefix.length + 1));
      if (!pattern) {
        msg.ack();
        continue;
      }
      try {
        const handler = this.getHandlerByPattern(pattern)!;
        // Nest's exception filters turn a handler's failure into an Observable that errors.
        await lastValueFrom(this.transformToObservable(await handler(msg.json(), new JetStreamContext([msg]))), {
          defaultValue: undefined,
        });
        msg.ack();
      } catch (err) {
        this.log.error(`${msg.subject}: ${err instanceof Error ? err.message : JSON.stringify(err)}`);
        msg.nak(1000);
      }
    }
  }

  /** The first event handler whose pattern matches `subject`, as NATS matches wildcards. */
  private patternOf(subject: string): string | undefined {
    const tokens = subject.split('.');
    return [...this.messageHandlers.entries()]
      .filter(([, handler]) => handler.isEventHandler)
      .map(([pattern]) => pattern)
      .find((pattern) => {
        const parts = pattern.split('.');
        for (const [i, part] of parts.entries()) {
          if (part === '>') return i < tokens.length;
          if (i >= tokens.length || (part !== '*' && part !== tokens[i])) return false;
        }
        return parts.length === tokens.length;
      });
  }

  async close(): Promise<void> {
    this.messages?.stop();
    await this.nats?.drain();
    this.nats = null;
  }

  on(): never {
    throw new Error('JetStreamEvents has no events to listen to.');
  }

  unwrap<T>(): T {
    return this.nats as T;
  }
}

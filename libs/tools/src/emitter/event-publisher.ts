import { Inject, Injectable } from '@nestjs/common';
import { NATS_LINK, type NatsLink } from '@parley/platform';

/** Port: publishes one message to a broker subject and waits until the broker has it. */
export interface EventPublisher {
  /** False when no broker is configured (NATS off). */
  readonly available: boolean;
  publish(subject: string, payload: unknown, signal: AbortSignal): Promise<void>;
}

export const EVENT_PUBLISHER = Symbol('parley.tools.event-publisher');

/** The NATS adapter: a flush after the publish, so "emitted" means the server received it. */
@Injectable()
export class NatsEventPublisher implements EventPublisher {
  constructor(@Inject(NATS_LINK) private readonly link: NatsLink) {}

  get available(): boolean {
    return this.link.enabled;
  }

  async publish(subject: string, payload: unknown, signal: AbortSignal): Promise<void> {
    if (!this.link.enabled) throw new Error('NATS is not configured (NATS_URL is unset).');
    const nats = this.link.connection;
    if (!nats) throw new Error(`NATS at ${this.link.url} has not answered since Parley started.`);
    if (nats.isClosed()) throw new Error('the connection to NATS is closed.');
    nats.publish(subject, Buffer.from(JSON.stringify(payload)));
    await Promise.race([
      nats.flush(),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    ]);
  }
}

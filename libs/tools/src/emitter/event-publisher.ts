import { Inject, Injectable } from '@nestjs/common';
import { NATS_CONNECTION, type NatsConnection } from '@parley/platform';

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
  constructor(@Inject(NATS_CONNECTION) private readonly nats: NatsConnection | null) {}

  get available(): boolean {
    return this.nats !== null && !this.nats.isClosed();
  }

  async publish(subject: string, payload: unknown, signal: AbortSignal): Promise<void> {
    if (!this.nats) throw new Error('NATS is not configured (NATS_URL is unset).');
    this.nats.publish(subject, Buffer.from(JSON.stringify(payload)));
    await Promise.race([
      this.nats.flush(),
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    ]);
  }
}

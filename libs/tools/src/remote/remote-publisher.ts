import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { NATS_LINK, type NatsConnection, type NatsLink } from '@parley/platform';
import { nanos } from 'nats';
import { invocationStreamName } from './skill-events';

/** How long JetStream remembers an invocation's id: a worker that publishes it again after a crash is deduplicated. */
const DUPLICATE_WINDOW_MS = 10 * 60_000;
/** Subjects known to be in the invocation stream, kept at most (one per remote tool subject). */
const MAX_KNOWN_SUBJECTS = 1_000;

/**
 * Publishes remote tool invocations to JetStream, so a service that is down receives them when it
 * comes back. Parley keeps one stream for them and adds each remote tool's subject to it on first
 * use (a subject a stream of the operator's holds stays there); the message id is the correlation id, so publishing the same call twice stores it once.
 */
@Injectable()
export class RemoteToolPublisher {
  private readonly known = new Set<string>();

  constructor(
    @Inject(NATS_LINK) private readonly link: NatsLink,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  get available(): boolean {
    return this.link.enabled;
  }

  async publish(subject: string, payload: unknown, msgID: string): Promise<void> {
    const nats = this.link.connection;
    if (!this.link.enabled) throw new Error('NATS is not configured (NATS_URL is unset).');
    if (!nats || nats.isClosed()) throw new Error(`NATS at ${this.link.url} is not connected.`);
    if (!this.known.has(subject)) await this.holdSubject(nats, subject);
    await nats.jetstream().publish(subject, Buffer.from(JSON.stringify(payload)), { msgID });
  }

  /**
   * Makes sure a stream holds `subject`: one of the operator's that already does, or Parley's
   * invocation stream, created or given the subject.
   */
  private async holdSubject(nats: NatsConnection, subject: string): Promise<void> {
    const jsm = await nats.jetstreamManager();
    const held = await jsm.streams.find(subject).catch(() => null);
    if (!held) {
      const name = invocationStreamName(this.config.prefix);
      const info = await jsm.streams.info(name).catch(() => null);
      if (!info) await jsm.streams.add({ name, subjects: [subject], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
      else await jsm.streams.update(name, { ...info.config, subjects: [...(info.config.subjects ?? []), subject] });
    }
    if (this.known.size >= MAX_KNOWN_SUBJECTS) this.known.clear();
    this.known.add(subject);
  }
}

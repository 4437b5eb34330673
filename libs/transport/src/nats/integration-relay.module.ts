import {
  Inject,
  Injectable,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore, type SubscriptionRunner } from '@parley/event-store';
import { NATS_LINK, PG_POOL, type NatsConnection, type NatsLink } from '@parley/platform';
import type { Pool } from 'pg';
import { runIntegrationRelay } from './integration-relay';

/**
 * Runs the integration-event relay in this process when NATS is on (apps/projector, apps/server),
 * from the moment NATS answers: at start, or later when it could not be reached then, with what
 * was recorded meanwhile published from the checkpoint.
 */
@Injectable()
export class IntegrationRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IntegrationRelay');
  private runner: SubscriptionRunner | null = null;
  private starting: Promise<void> | null = null;
  private cancel: (() => void) | null = null;
  private stopped = false;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(NATS_LINK) private readonly nats: NatsLink,
  ) {}

  get position(): string | null {
    return this.runner?.position ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    // Connected at start: the relay runs before the app is up; else once NATS answers.
    this.cancel = this.nats.onConnected(
      (nats) =>
        (this.starting = this.start(nats).catch((err: unknown) =>
          this.logger.error(`the integration relay did not start: ${String(err)}`),
        )),
    );
    await this.starting;
  }

  private async start(nats: NatsConnection): Promise<void> {
    const runner = await runIntegrationRelay({
      pool: this.pool,
      feed: this.store,
      nats,
      prefix: this.config.prefix,
      pollMs: this.config.eventStore.pollMs,
      onError: (err) => this.logger.error(`publishing integration events failed; retrying: ${String(err)}`),
      onDeadLetter: (e, err) =>
        this.logger.error(
          `event ${e.eventId} (${e.streamId}@${e.revision}) is too large for NATS even trimmed; it went to the dead letters: ${String(err)}`,
        ),
    });
    if (this.stopped) await runner.stop();
    else this.runner = runner;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.starting;
    await this.runner?.stop();
    this.runner = null;
  }
}

/** Needs CONFIG, PG_POOL, EVENT_STORE and NATS_LINK. */
@Module({ providers: [IntegrationRelay], exports: [IntegrationRelay] })
export class IntegrationRelayModule {}

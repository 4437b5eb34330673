import {
  Inject,
  Injectable,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore, type GlobalFeed, type SubscriptionRunner } from '@parley/event-store';
import { NATS_CONNECTION, PG_POOL, type NatsConnection } from '@parley/platform';
import type { Pool } from 'pg';
import { runIntegrationRelay } from './integration-relay';

/** Runs the integration-event relay in this process when NATS is on (apps/projector, apps/server). */
@Injectable()
export class IntegrationRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('IntegrationRelay');
  private runner: SubscriptionRunner | null = null;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection | null,
  ) {}

  get position(): string | null {
    return this.runner?.position ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.nats) return;
    this.runner = await runIntegrationRelay({
      pool: this.pool,
      feed: this.store as unknown as GlobalFeed,
      nats: this.nats,
      prefix: this.config.prefix,
      pollMs: this.config.eventStore.pollMs,
      onError: (err) => this.logger.error(`publishing integration events failed; retrying: ${String(err)}`),
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
    this.runner = null;
  }
}

/** Needs CONFIG, PG_POOL, EVENT_STORE and NATS_CONNECTION. */
@Module({ providers: [IntegrationRelay], exports: [IntegrationRelay] })
export class IntegrationRelayModule {}

import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore, type SubscriptionRunner } from '@parley/event-store';
import { MetricsService } from '@parley/observability';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import { runProjections } from './projection-runner';
import { PROJECTIONS } from './projections';

/**
 * Runs every projection in this process (apps/projector, apps/server), all on one
 * subscription: each batch of events is read once and applied to every read model in one
 * transaction. Another instance is a hot standby; a rebuild swaps read models in under the
 * subscription's checkpoint while it runs.
 */
@Injectable()
export class ProjectionsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projections');
  private runner: SubscriptionRunner | null = null;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(MetricsService) private readonly metrics?: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.runner = runProjections(PROJECTIONS, {
      pool: this.pool,
      feed: this.store,
      pollMs: this.config.eventStore.pollMs,
      onLag: (name, ms) => this.metrics?.setProjectionLag(name, ms),
      onError: (err) => this.logger.error(`read models: batch failed, retrying: ${String(err)}`),
    });
  }

  /** Resolves true once every projection has processed `position` (false after `timeoutMs`). */
  waitForPosition(position: string, timeoutMs: number): Promise<boolean> {
    return this.runner ? this.runner.waitForPosition(position, timeoutMs) : Promise.resolve(false);
  }

  // Before the pool closes (DatabaseModule ends it on application shutdown).
  async beforeApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
    this.runner = null;
  }
}

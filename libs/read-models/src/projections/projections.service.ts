import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore, type GlobalFeed, type SubscriptionRunner } from '@parley/event-store';
import { MetricsService } from '@parley/observability';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import { runProjection } from './projection-runner';
import { PROJECTIONS } from './projections';

/**
 * Runs every projection in this process (apps/projector, apps/server). Each projection is a
 * subscription of its own, so another instance is a hot standby and a rebuild swaps one
 * read model without stopping the others.
 */
@Injectable()
export class ProjectionsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projections');
  private runners: SubscriptionRunner[] = [];

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(MetricsService) private readonly metrics?: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    const feed = this.store as unknown as GlobalFeed;
    this.runners = PROJECTIONS.map((projection) =>
      runProjection(projection, {
        pool: this.pool,
        feed,
        pollMs: this.config.eventStore.pollMs,
        onLag: (name, ms) => this.metrics?.setProjectionLag(name, ms),
        onError: (name, err) => this.logger.error(`projection ${name}: batch failed, retrying: ${String(err)}`),
      }),
    );
  }

  /** Resolves once every projection has processed `position` (false after `timeoutMs`). */
  async waitForPosition(position: string, timeoutMs: number): Promise<boolean> {
    const reached = await Promise.all(this.runners.map((r) => r.waitForPosition(position, timeoutMs)));
    return reached.every(Boolean);
  }

  // Before the pool closes (DatabaseModule ends it on application shutdown).
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.map((r) => r.stop()));
    this.runners = [];
  }
}

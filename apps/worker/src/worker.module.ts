import type { DynamicModule } from '@nestjs/common';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES, CatalogModule } from '@parley/catalog';
import { ConfigModule, type Config } from '@parley/config';
import { TIMER_QUEUE, TURN_QUEUE } from '@parley/conversation';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule, QueueDepthModule } from '@parley/observability';
import { DatabaseModule, NatsModule, QueueModule, RedisModule } from '@parley/platform';
import { LiveDeltasModule } from '@parley/read-models';
import { ToolMetricsModule } from '@parley/tools';
import { TurnModule } from '@parley/turn';

/**
 * The worker: turn and timer jobs from the queue. Run as an application context, so the
 * routes of the modules it needs (catalog, keys) are never mounted; see runDeployable.
 */
export class WorkerModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
        RedisModule.forRoot(),
        NatsModule.forRoot(),
        QueueModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        QueueDepthModule.forRoot([TURN_QUEUE, TIMER_QUEUE]),
        ToolMetricsModule,
        AuthModule,
        CatalogModule,
        LiveDeltasModule,
        TurnModule.forRoot({ worker: true }),
      ],
    };
  }
}

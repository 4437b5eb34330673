import type { DynamicModule } from '@nestjs/common';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES, CatalogModule } from '@parley/catalog';
import { ConfigModule, type Config } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule, QueueDepthModule } from '@parley/observability';
import { DatabaseModule, NatsModule, QueueModule, RedisModule } from '@parley/platform';
import { LiveDeltasModule, ReadModelsModule } from '@parley/read-models';
import { ToolMetricsModule } from '@parley/tools';
import { ConversationModule, TIMER_QUEUE, TURN_QUEUE } from '@parley/conversation';
import {
  ConversationCommandsController,
  IntegrationRelayModule,
  NatsCommandModule,
  OpenApiModule,
  QueryTransportModule,
} from '@parley/transport';
import { TurnModule } from '@parley/turn';

export interface AppOptions {
  /** Run turn and timer jobs in this process (default true: the all-in-one server). */
  worker?: boolean;
}

/** The all-in-one deployable: HTTP, NATS, worker and projector in one process. */
export class AppModule {
  static forRoot(config: Config, options: AppOptions = {}): DynamicModule {
    return {
      module: AppModule,
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
        TurnModule.forRoot({ worker: options.worker ?? true }),
        ReadModelsModule.forRoot({ projections: true }),
        QueryTransportModule,
        NatsCommandModule.forRoot(ConversationModule),
        IntegrationRelayModule,
        OpenApiModule,
      ],
      controllers: [ConversationCommandsController],
    };
  }
}

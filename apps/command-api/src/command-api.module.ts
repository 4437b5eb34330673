import type { DynamicModule } from '@nestjs/common';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES, CatalogModule } from '@parley/catalog';
import { ConfigModule, type Config } from '@parley/config';
import { ConversationModule, TIMER_QUEUE, TURN_QUEUE } from '@parley/conversation';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule, QueueDepthModule } from '@parley/observability';
import { DatabaseModule, NatsModule, QueueModule, RedisModule } from '@parley/platform';
import { LiveDeltasModule } from '@parley/read-models';
import { ConversationCommandsController, NatsCommandModule } from '@parley/transport';
import { TurnModule } from '@parley/turn';

/** The command side: HTTP and NATS commands; turns run in apps/worker, read models in apps/projector. */
export class CommandApiModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: CommandApiModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
        RedisModule.forRoot(),
        NatsModule.forRoot(),
        QueueModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        QueueDepthModule.forRoot([TURN_QUEUE, TIMER_QUEUE]),
        AuthModule,
        CatalogModule,
        LiveDeltasModule,
        TurnModule.forRoot({ worker: false }),
        NatsCommandModule.forRoot(ConversationModule),
      ],
      controllers: [ConversationCommandsController],
    };
  }
}

import type { DynamicModule } from '@nestjs/common';
import { ConfigModule, type Config } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule } from '@parley/observability';
import { DatabaseModule, NatsModule } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { IntegrationRelayModule } from '../nats/integration-relay.module';

/** The projector: every read-model projection and the JetStream integration relay, no routes of its own. */
export class ProjectorModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: ProjectorModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        NatsModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        ReadModelsModule.forRoot({ projections: true }),
        IntegrationRelayModule,
      ],
    };
  }
}

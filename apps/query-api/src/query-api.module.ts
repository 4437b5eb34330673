import type { DynamicModule } from '@nestjs/common';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES } from '@parley/catalog';
import { ConfigModule, type Config } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule } from '@parley/observability';
import { DatabaseModule, NatsModule, RedisModule } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { JsonRpcModule, QueryTransportModule } from '@parley/transport';

/** The query side: HTTP and NATS queries, auditors' reads, the SSE stream and JSON-RPC (commands forwarded); projections run in apps/projector. */
export class QueryApiModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: QueryApiModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
        RedisModule.forRoot(),
        NatsModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        AuthModule,
        ReadModelsModule.forRoot({ projections: false }),
        QueryTransportModule,
        JsonRpcModule,
      ],
    };
  }
}

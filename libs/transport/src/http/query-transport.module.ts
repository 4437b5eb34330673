import { Module } from '@nestjs/common';
import { CatalogModule } from '@parley/catalog';
import { LiveDeltasModule } from '@parley/read-models';
import { NatsQueryModule } from '../nats/nats-transport.module';
import { StreamController } from '../sse/stream.controller';
import { AuditController } from './audit.controller';
import { QueriesController } from './queries.controller';

/**
 * The query side's front doors: HTTP queries, auditors' reads, usage, the SSE stream and
 * `<prefix>.qry.*` over NATS. Needs ReadModelsModule, EventStoreModule, AuthModule,
 * ObservabilityModule, NatsModule and DatabaseModule with CATALOG_ENTITIES.
 */
@Module({
  imports: [CatalogModule, LiveDeltasModule, NatsQueryModule],
  controllers: [QueriesController, AuditController, StreamController],
})
export class QueryTransportModule {}

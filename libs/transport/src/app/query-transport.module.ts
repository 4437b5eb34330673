import { Module } from '@nestjs/common';
import { CatalogModule } from '@parley/catalog';
import { LiveDeltasModule } from '@parley/read-models';
import { operationsController } from '../http/operations.controller';
import { NATS_QUERY_SERVER, natsFrontDoor } from '../nats/nats-front-door';
import { bindOperations, QUERY_OPERATIONS } from '../operations/bound-operations';
import { QUERIES } from '../operations/query-table';
import { StreamController } from '../sse/stream.controller';

const QueriesController = operationsController('QueriesController', QUERY_OPERATIONS, QUERIES);

/**
 * The query side's front doors: the HTTP routes and `<prefix>.qry.*` over NATS derived from
 * QUERIES, and the SSE stream. Needs ReadModelsModule, EventStoreModule, AuthModule,
 * ObservabilityModule, NatsModule and DatabaseModule with CATALOG_ENTITIES.
 */
@Module({
  imports: [CatalogModule, LiveDeltasModule],
  providers: [bindOperations(QUERY_OPERATIONS, QUERIES), natsFrontDoor(NATS_QUERY_SERVER, 'qry', QUERY_OPERATIONS)],
  controllers: [QueriesController, StreamController],
})
export class QueryTransportModule {}

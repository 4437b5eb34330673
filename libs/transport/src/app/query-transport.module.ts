import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { CatalogModule } from '@parley/catalog';
import { LiveDeltasModule } from '@parley/read-models';
import { LongTermMemoryModule } from '@parley/turn';
import { operationsController } from '../http/operations.controller';
import { NATS_QUERY_SERVER, natsFrontDoor } from '../nats/nats-front-door';
import { jsonRpcTable } from '../json-rpc/json-rpc-methods';
import { bindOperations, QUERY_OPERATIONS } from '../operations/bound-operations';
import { QUERIES } from '../operations/query-table';
import { StreamController } from '../sse/stream.controller';
import { StreamHub } from '../sse/stream-hub';

const QueriesController = operationsController('QueriesController', QUERY_OPERATIONS, QUERIES);

/**
 * The query side's front doors: the HTTP routes and `<prefix>.qry.*` over NATS derived from
 * QUERIES (and JSON-RPC's methods when JsonRpcModule is in the app), and the SSE stream; the
 * memory queries' handler comes with LongTermMemoryModule. Needs ReadModelsModule, EventStoreModule, AuthModule,
 * ObservabilityModule, NatsModule and DatabaseModule with CATALOG_ENTITIES.
 */
@Module({
  imports: [CatalogModule, LiveDeltasModule, LongTermMemoryModule],
  providers: [
    bindOperations(QUERY_OPERATIONS, QUERIES),
    natsFrontDoor(NATS_QUERY_SERVER, 'qry', QUERY_OPERATIONS),
    jsonRpcTable(QUERY_OPERATIONS),
    {
      provide: StreamHub,
      inject: [CONFIG, EVENT_STORE],
      useFactory: (config: Config, store: EventStore) =>
        new StreamHub({
          store,
          pollMs: config.eventStore.pollMs,
          maxPerSubject: config.sse.maxStreamsPerSubject,
          maxTotal: config.sse.maxStreams,
        }),
    },
  ],
  controllers: [QueriesController, StreamController],
})
export class QueryTransportModule {}

import type { DynamicModule, Type } from '@nestjs/common';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES, CatalogModule } from '@parley/catalog';
import { ConfigModule, type Config } from '@parley/config';
import { TIMER_QUEUE, TURN_QUEUE } from '@parley/conversation';
import { EventStoreModule } from '@parley/event-store';
import { INGESTION_QUEUE, IngestionWorkerModule, KnowledgeModule } from '@parley/knowledge';
import { ObservabilityModule, QueueDepthModule } from '@parley/observability';
import { DatabaseModule, NatsModule, QueueModule, RedisModule } from '@parley/platform';
import { LiveDeltasModule } from '@parley/read-models';
import { ToolMetricsModule } from '@parley/tools';
import { TurnModule } from './turn.module';

/**
 * What every deployable that runs conversations stands on: config, PostgreSQL, Redis, NATS, the
 * job queue, the event store, observability, auth, the catalog, the document collections, live deltas and the turn
 * runtime (`worker: true` also consumes the turn, timer and ingestion queues in this process).
 */
export function runtimeModules(config: Config, options: { worker: boolean }): (DynamicModule | Type)[] {
  return [
    ConfigModule.forRoot(config),
    DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
    RedisModule.forRoot(),
    NatsModule.forRoot(),
    QueueModule.forRoot(),
    EventStoreModule.forRoot(),
    ObservabilityModule,
    QueueDepthModule.forRoot([TURN_QUEUE, TIMER_QUEUE, INGESTION_QUEUE]),
    ToolMetricsModule,
    AuthModule,
    CatalogModule,
    KnowledgeModule,
    LiveDeltasModule,
    TurnModule.forRoot(options),
    ...(options.worker ? [IngestionWorkerModule] : []),
  ];
}

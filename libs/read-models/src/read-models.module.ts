import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { CONVERSATION_KEYS, EVENT_STORE, type ConversationKeys, type EventStore } from '@parley/event-store';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import { ProjectionsService } from './projections/projections.service';
import { AuditQueries } from './queries/audit-queries';
import { ConversationQueries } from './queries/conversation-queries';
import { ProjectionPositions } from './queries/projection-positions';
import { UsageQueries } from './queries/usage-queries';

export interface ReadModelsOptions {
  /** Run the projections in this process (projector, all-in-one server); false for a query-only app. */
  projections: boolean;
  /** How long a query with minPosition waits for the projections (default 5 s). */
  minPositionTimeoutMs?: number;
}

const DEFAULT_MIN_POSITION_TIMEOUT_MS = 5000;

/**
 * The read side: the projections (optionally) and the queries over their tables and over the
 * event store. Needs CONFIG, PG_POOL (DatabaseModule) and EVENT_STORE (EventStoreModule).
 */
@Module({})
export class ReadModelsModule {
  static forRoot(options: ReadModelsOptions): DynamicModule {
    const queries: Provider[] = [
      {
        provide: ProjectionPositions,
        inject: [PG_POOL, EVENT_STORE],
        useFactory: (pool: Pool, store: EventStore) =>
          new ProjectionPositions(pool, store, options.minPositionTimeoutMs ?? DEFAULT_MIN_POSITION_TIMEOUT_MS),
      },
      {
        provide: ConversationQueries,
        inject: [PG_POOL, ProjectionPositions, { token: CONVERSATION_KEYS, optional: true }],
        useFactory: (pool: Pool, positions: ProjectionPositions, keys?: ConversationKeys) =>
          new ConversationQueries(pool, positions, keys ?? null),
      },
      {
        provide: UsageQueries,
        inject: [PG_POOL, ProjectionPositions],
        useFactory: (pool: Pool, positions: ProjectionPositions) => new UsageQueries(pool, positions),
      },
      { provide: AuditQueries, inject: [EVENT_STORE], useFactory: (store: EventStore) => new AuditQueries(store) },
    ];
    const exported = [ProjectionPositions, ConversationQueries, UsageQueries, AuditQueries];
    return {
      module: ReadModelsModule,
      global: true,
      providers: options.projections ? [...queries, ProjectionsService] : queries,
      exports: options.projections ? [...exported, ProjectionsService] : exported,
    };
  }
}

import { Global, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { LlmModule } from '@parley/llm';
import { PG_POOL } from '@parley/platform';
import { Collections } from './collections';
import { CollectionRemoval } from './ingestion/collection-removal';
import { IngestionService } from './ingestion/ingestion.service';
import { COLLECTION_SOURCE, VectorStoreResolver, type CollectionSource } from './vector-store.resolver';
import type { Queryable } from './vector-store.port';

/** Closes the pools of vector stores in other databases when the app stops. */
class ClosingResolver extends VectorStoreResolver implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

/**
 * Document collections at run time: the vector-store resolver over Parley's own database and
 * `Collections` (embed, search), document ingestion (IngestionService), and what goes with a
 * collection deleted from the catalog (CollectionRemoval, which CatalogService calls). Needs COLLECTION_SOURCE
 * and PROVIDER_ENDPOINTS (the global CatalogModule binds both), PG_POOL (DatabaseModule), JOB_QUEUE
 * (QueueModule) and CONFIG.
 */
@Global()
@Module({
  imports: [LlmModule],
  providers: [
    {
      provide: VectorStoreResolver,
      inject: [COLLECTION_SOURCE, PG_POOL, CONFIG],
      useFactory: (source: CollectionSource, pool: Queryable, config: Config) =>
        new ClosingResolver(source, pool, {
          efSearch: config.llm.hnswEfSearch,
          m: config.llm.hnswM,
          efConstruction: config.llm.hnswEfConstruction,
          buildMemoryMb: config.llm.hnswBuildMemoryMb,
          exactBelow: config.llm.vectorExactBelow,
          cacheMb: config.llm.vectorCacheMb,
          graphMb: config.llm.vectorGraphMb,
          index: config.llm.vectorIndex,
          onGraphError: (collection, err) =>
            new Logger('VectorStore').warn(
              `collection ${collection}: no HNSW graph for the next 30 s, searched without it (${err instanceof Error ? err.message : String(err)})`,
            ),
        }),
    },
    Collections,
    IngestionService,
    CollectionRemoval,
  ],
  exports: [VectorStoreResolver, Collections, IngestionService, CollectionRemoval],
})
export class KnowledgeModule {}

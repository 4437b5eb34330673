export type { Chunk, MetadataValue, Queryable, SearchHit, SearchQuery, VectorStore } from './vector-store.port';
export { ExactScanVectorStore } from './exact-scan/exact-scan.vector-store';
export { PgvectorVectorStore, hasPgvector, isEmbedded, type PgvectorOptions } from './pgvector/pgvector.vector-store';
export { CollectionGraphs, GRAPH_M, GRAPH_EF_CONSTRUCTION, GRAPH_EF_SEARCH } from './graph/collection-graphs';
export { GraphProcess } from './graph/graph-process';
export {
  COLLECTION_SOURCE,
  DEFAULT_TOP_K,
  VectorStoreResolver,
  type CollectionSource,
  type DocumentCollectionConfig,
  type EmbeddingModelConfig,
  type ResolvedCollection,
  type ResolverOptions,
  type VectorIndexChoice,
} from './vector-store.resolver';
export {
  Collections,
  type CollectionSearch,
  type EmbeddedTexts,
  type EmbeddingSpend,
  type SearchOptions,
} from './collections';
export { KnowledgeModule } from './knowledge.module';
export {
  MEMORY_TABLE,
  SCOPE_WEIGHTS,
  SWEEP_BATCH,
  type Memory,
  type MemoryHit,
  type MemorySubject,
  type NewMemory,
  type RecallQuery,
} from './memory/memory-rows';
export { MemoryStore } from './memory/memory-store';
export { chunkText, type ChunkingOptions, type TextChunk } from './ingestion/chunker';
export { extractText, mediaTypeOf, MEDIA_TYPES, type MediaType, type SourceFile } from './ingestion/extract';
export { DocumentRegistry, type DocumentRecord, type DocumentStatus } from './ingestion/document-registry';
export { CollectionRemoval, type RemovedCollection, type RemovedDocument } from './ingestion/collection-removal';
export {
  INGESTION_QUEUE,
  IngestionService,
  type CollectionDocuments,
  type DocumentInput,
  type IngestionJob,
  type IngestionSettings,
} from './ingestion/ingestion.service';
export { IngestionWorker, IngestionWorkerModule } from './ingestion/ingestion-worker';
export { DocumentsController } from './http/documents.controller';
export { KnowledgeHttpModule } from './http/knowledge-http.module';
export { registerDocsCommands } from './cli/docs.commands';

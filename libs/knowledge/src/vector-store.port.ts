/** Metadata values a filter can match by equality. */
export type MetadataValue = string | number | boolean | null;

/** One piece of a document, with its embedding, in one collection. */
export interface Chunk {
  /** Unique within the collection; upserting the same id replaces the chunk. */
  id: string;
  collection: string;
  documentId: string;
  text: string;
  tokens: number;
  metadata: Record<string, MetadataValue>;
  embedding: number[];
}

export interface SearchQuery {
  collection: string;
  vector: number[];
  topK: number;
  /** Lowest cosine similarity a hit may have (-1…1); unset: no floor. */
  threshold?: number;
  /** Each key must equal the chunk's metadata value. */
  filter?: Record<string, MetadataValue>;
}

export interface SearchHit {
  chunk: Omit<Chunk, 'embedding'>;
  /** Cosine similarity to the query vector, higher is closer. */
  score: number;
}

/**
 * Where chunks and their embeddings are kept and searched by cosine similarity. Two adapters
 * run one contract (contract/vector-store.contract.ts): pgvector with an HNSW index, and an
 * exact scan for PostgreSQL without the extension. Bad input is a VALIDATION_FAILED
 * DomainError and writes nothing.
 */
export interface VectorStore {
  readonly kind: 'pgvector' | 'exact';
  /** Length of every embedding this store holds. */
  readonly dimensions: number;
  /** Creates what the store needs (tables, index) when missing; idempotent. */
  init(): Promise<void>;
  upsert(chunks: readonly Chunk[]): Promise<void>;
  /** Removes a document's chunks; returns how many went. */
  deleteDocument(collection: string, documentId: string): Promise<number>;
  /**
   * Removes a document's chunks other than `keepIds` (after a re-ingestion upserted the new ones
   * over the same ids); returns how many went.
   */
  pruneDocument(collection: string, documentId: string, keepIds: readonly string[]): Promise<number>;
  /** Removes every chunk of a collection (it left the catalog); returns how many went. */
  deleteCollection(collection: string): Promise<number>;
  count(collection: string): Promise<number>;
  /** The closest chunks, best first (ties by id), at most topK. */
  search(query: SearchQuery): Promise<SearchHit[]>;
}

/** What the adapters send SQL through: a pg Pool or client, or a PGlite instance. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

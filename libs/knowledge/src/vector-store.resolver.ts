import { DomainError } from '@parley/core';
import { Pool } from 'pg';
import { ExactScanVectorStore } from './exact-scan/exact-scan.vector-store';
import { GraphProcess } from './graph/graph-process';
import { PgvectorVectorStore, hasPgvector, isEmbedded, type PgvectorOptions } from './pgvector/pgvector.vector-store';
import type { Queryable, VectorStore } from './vector-store.port';

/** A document collection of the catalog with the vector store it lives in. */
export interface DocumentCollectionConfig {
  code: string;
  /** The name chunks are stored under in the store. */
  collectionName: string;
  /** Lowest cosine similarity of a hit (the catalog's llmSimilarityThreshold); null: none. */
  similarityThreshold: number | null;
  /** Hits per search (llmResultCount); null: DEFAULT_TOP_K. */
  resultCount: number | null;
  /** The model that embeds its chunks and queries: the collection's llmEmbeddingModel, else its store's. */
  embeddingModel: EmbeddingModelConfig;
  store: {
    code: string;
    /** The catalog's llmVectorStoreType code: `PGV` (pgvector), `SCAN` (exact scan), else chosen by the database. */
    type: string | null;
    /** Another PostgreSQL database for the chunks; null: Parley's own. */
    connectionUrl: string | null;
  };
}

/** A catalog model with `modelType: embedding`, as an embedding call needs it. */
export interface EmbeddingModelConfig {
  code: string;
  /** The provider's model name (llmModelName). */
  name: string;
  providerCode: string;
  /** Per token (llmInputTokenPrice). */
  inputTokenPrice: number;
}

/** Looks up a document collection by code (the catalog implements it); NOT_FOUND when missing. */
export interface CollectionSource {
  collection(code: string): Promise<DocumentCollectionConfig>;
}

export const COLLECTION_SOURCE = Symbol('parley.collection-source');

/** Hits per search when a collection names no result count (seed 000: Spring AI's default). */
export const DEFAULT_TOP_K = 4;

export interface ResolvedCollection {
  config: DocumentCollectionConfig;
  store: VectorStore;
  topK: number;
  threshold: number | undefined;
}

type StoreKind = VectorStore['kind'] | 'auto';

/** Which index searches a pgvector store's large collections (VECTOR_INDEX). */
export type VectorIndexChoice = 'auto' | 'graph' | 'pgvector';

export interface ResolverOptions extends Omit<PgvectorOptions, 'graph'> {
  /**
   * MB of HNSW graphs each store keeps in the graph process (VECTOR_GRAPH_MB); 0: none, and
   * pgvector's index serves wherever the extension is.
   */
  graphMb?: number;
  /**
   * `graph`: pgvector stores search large collections through Parley's graph too;
   * `pgvector`: through pgvector's own index; `auto`: the graph in an embedded database (PGlite),
   * pgvector's index in a PostgreSQL server. The exact scan, with no index of its own, always
   * uses the graph when graphMb allows.
   */
  index?: VectorIndexChoice;
  /** Reports a graph that could not be built. */
  onGraphError?: (collection: string, err: unknown) => void;
}

function kindOf(type: string | null): StoreKind {
  const t = type?.toUpperCase() ?? null;
  if (t === 'PGV') return 'pgvector';
  if (t === 'SCAN') return 'exact';
  return 'auto';
}

/**
 * Collection → its VectorStore config in the catalog → an adapter: pgvector where the database
 * has the extension (or the store's type says `PGV`), the exact scan otherwise (or when it says
 * `SCAN`). Adapters are kept per database, kind and embedding length, and initialised once.
 */
export class VectorStoreResolver {
  private readonly stores = new Map<string, Promise<VectorStore>>();
  private readonly pools = new Map<string, Pool>();
  /** The process of every store's graphs, started with the first graph. */
  private readonly graphProcess = new GraphProcess();

  constructor(
    private readonly source: CollectionSource,
    /** Parley's own database (PG_POOL). */
    private readonly db: Queryable,
    private readonly options: ResolverOptions = {},
  ) {}

  async resolve(collectionCode: string, dimensions: number): Promise<ResolvedCollection> {
    const config = await this.source.collection(collectionCode);
    return {
      config,
      store: await this.storeFor(config, dimensions),
      topK: config.resultCount ?? DEFAULT_TOP_K,
      threshold: config.similarityThreshold ?? undefined,
    };
  }

  /** The adapter a collection's chunks of `dimensions` live in, by its vector store's settings alone. */
  storeFor(config: Pick<DocumentCollectionConfig, 'store'>, dimensions: number): Promise<VectorStore> {
    const key = `${config.store.connectionUrl ?? ''}|${kindOf(config.store.type)}|${dimensions}`;
    let store = this.stores.get(key);
    if (!store) {
      store = this.open(config, dimensions);
      this.stores.set(key, store);
      store.catch(() => this.stores.delete(key));
    }
    return store;
  }

  private async open(config: Pick<DocumentCollectionConfig, 'store'>, dimensions: number): Promise<VectorStore> {
    const db = this.databaseOf(config.store.connectionUrl);
    const wanted = kindOf(config.store.type);
    const vector = wanted === 'exact' ? false : await hasPgvector(db);
    if (wanted === 'pgvector' && !vector) {
      throw DomainError.validation(
        [
          {
            path: `vectorStores.${config.store.code}.llmVectorStoreType`,
            message: 'PGV needs the pgvector extension, which its database lacks',
          },
        ],
        `Vector store '${config.store.code}' asks for pgvector, which its database does not have.`,
      );
    }
    const graphMb = this.options.graphMb ?? 0;
    const graph =
      graphMb > 0
        ? {
            worker: this.graphProcess,
            megabytes: graphMb,
            onError: this.options.onGraphError,
          }
        : undefined;
    const store = vector
      ? new PgvectorVectorStore(db, dimensions, {
          ...this.options,
          graph: (await this.pgvectorUsesGraph(db)) ? graph : undefined,
        })
      : new ExactScanVectorStore(
          db,
          dimensions,
          this.options.cacheMb ?? 0,
          graph && { ...graph, above: this.options.exactBelow ?? 0 },
        );
    await store.init();
    return store;
  }

  private async pgvectorUsesGraph(db: Queryable): Promise<boolean> {
    const index = this.options.index ?? 'auto';
    if ((this.options.graphMb ?? 0) <= 0 || index === 'pgvector') return false;
    return index === 'graph' || (await isEmbedded(db));
  }

  private databaseOf(url: string | null): Queryable {
    if (url === null) return this.db;
    let pool = this.pools.get(url);
    if (!pool) {
      pool = new Pool({ connectionString: url, max: 4 });
      this.pools.set(url, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end()));
    this.pools.clear();
    this.stores.clear();
    await this.graphProcess.close();
  }
}

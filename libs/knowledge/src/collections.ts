import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@parley/core';
import { EmbeddingClient, PROVIDER_ENDPOINTS, type ProviderEndpoints } from '@parley/llm';
import type { MetadataValue, SearchHit } from './vector-store.port';
import {
  COLLECTION_SOURCE,
  VectorStoreResolver,
  type CollectionSource,
  type ResolvedCollection,
} from './vector-store.resolver';

/** What embedding some texts with a collection's model cost. */
export interface EmbeddingSpend {
  /** The catalog code of the embedding model. */
  model: string;
  tokens: number;
  cost: number;
  latencyMs: number;
}

export interface EmbeddedTexts {
  collection: ResolvedCollection;
  /** One per text, in order. */
  vectors: number[][];
  spend: EmbeddingSpend;
}

export interface CollectionSearch {
  collection: ResolvedCollection;
  hits: SearchHit[];
  spend: EmbeddingSpend;
  /** The store's search alone, after the embedding call. */
  searchMs: number;
}

export interface SearchOptions {
  /** Default: the collection's llmResultCount, else DEFAULT_TOP_K. */
  topK?: number;
  /** Default: the collection's llmSimilarityThreshold, else none. */
  threshold?: number;
  filter?: Record<string, MetadataValue>;
  signal?: AbortSignal;
}

/**
 * A document collection of the catalog by code, ready to use: texts embedded with its embedding
 * model (through the provider's `/v1/embeddings`, batched, retried and broken as chat calls are),
 * and the vector store it lives in, resolved for that model's vector length. Ingestion embeds
 * chunks through it; retrieval embeds a query and searches.
 */
@Injectable()
export class Collections {
  constructor(
    @Inject(COLLECTION_SOURCE) private readonly source: CollectionSource,
    @Inject(VectorStoreResolver) private readonly resolver: VectorStoreResolver,
    @Inject(EmbeddingClient) private readonly embeddings: EmbeddingClient,
    @Inject(PROVIDER_ENDPOINTS) private readonly endpoints: ProviderEndpoints,
  ) {}

  /** The collection's config and store (NOT_FOUND when the catalog has no such collection). */
  async resolve(code: string, dimensions: number): Promise<ResolvedCollection> {
    return this.resolver.resolve(code, dimensions);
  }

  async embed(code: string, texts: readonly string[], signal?: AbortSignal): Promise<EmbeddedTexts> {
    if (texts.length === 0) throw DomainError.validation([{ path: 'texts', message: 'nothing to embed' }]);
    const config = await this.source.collection(code);
    const model = config.embeddingModel;
    const provider = await this.endpoints.endpointFor(model.providerCode);
    const result = await this.embeddings.embed(
      { provider, model: model.name, inputs: [...texts], inputTokenPrice: model.inputTokenPrice },
      signal,
    );
    const dimensions = result.vectors[0].length;
    if (result.vectors.some((v) => v.length !== dimensions)) {
      throw DomainError.validation(
        [{ path: `models.${model.code}`, message: 'the model returned vectors of different lengths' }],
        `Embedding model '${model.code}' returned vectors of different lengths.`,
      );
    }
    return {
      collection: await this.resolver.resolve(code, dimensions),
      vectors: result.vectors,
      spend: { model: model.code, tokens: result.tokens, cost: result.cost, latencyMs: result.latencyMs },
    };
  }

  /** The closest chunks to `text`, best first, at most top-K and above the threshold. */
  async search(code: string, text: string, options: SearchOptions = {}): Promise<CollectionSearch> {
    const { collection, vectors, spend } = await this.embed(code, [text], options.signal);
    const started = performance.now();
    const hits = await collection.store.search({
      collection: collection.config.collectionName,
      vector: vectors[0],
      topK: options.topK ?? collection.topK,
      threshold: options.threshold ?? collection.threshold,
      filter: options.filter,
    });
    return { collection, hits, spend, searchMs: performance.now() - started };
  }
}

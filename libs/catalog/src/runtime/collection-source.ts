import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@parley/core';
import type { CollectionSource, DocumentCollectionConfig } from '@parley/knowledge';
import { CatalogReader } from '../store/catalog-reader';
import { callTimeCache } from './call-time-cache';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The knowledge lib's view of a document collection and its vector store, reused for CALL_TIME_TTL_MS. */
@Injectable()
export class CatalogCollectionSource implements CollectionSource {
  readonly collection = callTimeCache((code) => this.lookUp(code));

  constructor(@Inject(CatalogReader) private readonly reader: CatalogReader) {}

  private async lookUp(code: string): Promise<DocumentCollectionConfig> {
    const collection = await this.reader.record('documentCollections', code);
    if (!collection) throw DomainError.notFound('Document collection', code);
    const storeCode = String(collection.llmVectorStore);
    const store = await this.reader.record('vectorStores', storeCode);
    if (!store) throw DomainError.notFound('Vector store', storeCode);
    const modelCode = str(collection.llmEmbeddingModel) ?? str(store.llmEmbeddingModel);
    if (!modelCode) {
      throw DomainError.validation(
        [{ path: `documentCollections.${code}.llmEmbeddingModel`, message: 'no embedding model is named' }],
        `Document collection '${code}' has no embedding model, nor has its vector store '${storeCode}'.`,
      );
    }
    const model = await this.reader.record('models', modelCode);
    if (!model) throw DomainError.notFound('Model', modelCode);
    return Object.freeze({
      code,
      collectionName: String(collection.collectionName),
      similarityThreshold: num(collection.llmSimilarityThreshold),
      resultCount: num(collection.llmResultCount),
      embeddingModel: {
        code: modelCode,
        name: String(model.llmModelName),
        providerCode: String(model.llmProvider),
        inputTokenPrice: num(model.llmInputTokenPrice) ?? 0,
      },
      store: { code: storeCode, type: str(store.llmVectorStoreType), connectionUrl: str(store.connectionUrl) },
    });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Queryable } from '../vector-store.port';
import { VectorStoreResolver, type DocumentCollectionConfig } from '../vector-store.resolver';
import { DocumentRegistry } from './document-registry';

/** A document collection as it was in the catalog: where its chunks are kept. */
export type RemovedCollection = Pick<DocumentCollectionConfig, 'code' | 'collectionName' | 'store'>;

/** A document of the collection, as the registry had it. */
export interface RemovedDocument {
  documentId: string;
  /** The vector length its chunks were stored with; null before any were. */
  dimensions: number | null;
}

/**
 * What leaves with a document collection deleted from the catalog. Its registry rows and waiting
 * texts go with the catalog row itself (their foreign key cascades, in the catalog's
 * transaction, and no document can be added to a collection that is gone), so a queued
 * ingestion job then finds nothing to do. Their chunks go from the vector store here: when no
 * other collection of the catalog keeps chunks under the same name in the same database, every
 * chunk under that name (so a collection created again with the code starts empty); when one does
 * (collections may share a `collectionName`), only the chunks of the documents ingested through
 * this collection, and the other's stay.
 */
@Injectable()
export class CollectionRemoval {
  constructor(@Inject(VectorStoreResolver) private readonly resolver: VectorStoreResolver) {}

  /** The collection's documents, read in the catalog's transaction before its row goes. */
  documentsOf(code: string, transaction: Queryable): Promise<RemovedDocument[]> {
    return new DocumentRegistry(transaction).documentsOf(code);
  }

  /** The collection's document, chunk and token counts, read in the catalog's transaction. */
  counts(code: string, transaction: Queryable): Promise<{ documents: number; chunks: number; tokens: number }> {
    return new DocumentRegistry(transaction).counts(code);
  }

  /** Removes the chunks of `documents` (all under the collection's name unless `shared`); answers how many went. */
  async purge(
    collection: RemovedCollection,
    documents: readonly RemovedDocument[],
    options: { shared: boolean },
  ): Promise<number> {
    const lengths = new Set(documents.flatMap((d) => (d.dimensions === null ? [] : [d.dimensions])));
    let chunks = 0;
    for (const dimensions of lengths) {
      const store = await this.resolver.storeFor(collection, dimensions);
      if (!options.shared) {
        chunks += await store.deleteCollection(collection.collectionName);
        continue;
      }
      for (const d of documents.filter((doc) => doc.dimensions === dimensions))
        chunks += await store.deleteDocument(collection.collectionName, d.documentId);
    }
    return chunks;
  }
}

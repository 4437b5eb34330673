import type { Collections } from '@parley/knowledge';
import { countTokens } from '@parley/prompt';

/** A document for a test collection: its chunks in order, and its own flat metadata. */
export interface TestDocument {
  documentId: string;
  title: string;
  chunks: string[];
  metadata?: Record<string, string | number | boolean | null>;
}

/**
 * Puts documents into a catalog collection as ingestion would (the shared chunk conventions):
 * chunk ids `${documentId}#${chunkIndex}`, metadata the document's own plus `title` and
 * `chunkIndex`, tokens counted with the embedding model's tokenizer, embedded with the
 * collection's model through `Collections.embed`.
 */
export async function putDocuments(collections: Collections, code: string, documents: TestDocument[]): Promise<void> {
  const chunks = documents.flatMap((d) => d.chunks.map((text, chunkIndex) => ({ d, text, chunkIndex })));
  const { collection, vectors } = await collections.embed(
    code,
    chunks.map((c) => c.text),
  );
  const model = collection.config.embeddingModel.name;
  await collection.store.upsert(
    chunks.map(({ d, text, chunkIndex }, i) => ({
      id: `${d.documentId}#${chunkIndex}`,
      collection: collection.config.collectionName,
      documentId: d.documentId,
      text,
      tokens: countTokens(text, model),
      metadata: { ...d.metadata, title: d.title, chunkIndex },
      embedding: vectors[i],
    })),
  );
}

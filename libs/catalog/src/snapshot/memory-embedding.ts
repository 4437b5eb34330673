import type { Row } from '../model/entity-schemas';

/**
 * The embedding model long-term memory uses: the one MEMORY_EMBEDDING_MODEL names (an active
 * `embedding` model), else the catalog's only active embedding model. A reason when there is
 * none to use, for the catalog's validation and the snapshot's refusal.
 */
export function memoryEmbeddingModel(models: Iterable<Row>, configured: string | null): Row | string {
  const embedding = [...models].filter((m) => m.modelType === 'embedding' && m.status !== 'inactive');
  if (configured !== null) {
    const named = embedding.find((m) => m.code === configured);
    return named ?? `MEMORY_EMBEDDING_MODEL names '${configured}', which is not an active embedding model`;
  }
  if (embedding.length === 1) return embedding[0];
  return embedding.length === 0
    ? 'long-term memory needs an embedding model (modelType: embedding) and the catalog has none'
    : `long-term memory needs one embedding model and the catalog has ${embedding.length}: set MEMORY_EMBEDDING_MODEL`;
}

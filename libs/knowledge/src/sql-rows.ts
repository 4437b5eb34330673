import type { Chunk, MetadataValue, SearchHit } from './vector-store.port';

/** The columns both adapters' tables share, after the embedding. */
export const CHUNK_COLUMNS = 'collection, id, document_id, text, tokens, metadata';

export interface ChunkRow {
  collection: string;
  id: string;
  document_id: string;
  text: string;
  tokens: number;
  metadata: Record<string, MetadataValue>;
  score: number;
}

export const toHit = (row: ChunkRow): SearchHit => ({
  chunk: {
    id: row.id,
    collection: row.collection,
    documentId: row.document_id,
    text: row.text,
    tokens: Number(row.tokens),
    metadata: row.metadata,
  },
  score: Number(row.score),
});

/**
 * `($1, $2, …), (…)` for a multi-row insert of `width` columns, and the flat parameters: one
 * statement, so a batch is stored whole or not at all.
 */
export function valuesOf(
  chunks: readonly Chunk[],
  row: (chunk: Chunk) => unknown[],
  casts: string[],
): { values: string; params: unknown[] } {
  const params: unknown[] = [];
  const values = chunks
    .map((chunk) => {
      const cells = row(chunk).map((value, i) => {
        params.push(value);
        return `$${params.length}${casts[i] ?? ''}`;
      });
      return `(${cells.join(', ')})`;
    })
    .join(', ');
  return { values, params };
}

/** Rows per insert statement (PostgreSQL takes at most 65535 parameters). */
export const INSERT_BATCH = 500;

export function* batches<T>(items: readonly T[], size = INSERT_BATCH): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

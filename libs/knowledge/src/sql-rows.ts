import type { Chunk, MetadataValue, Queryable, SearchHit } from './vector-store.port';

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

/** How an adapter stores a chunk's embedding: its columns, their values and their casts. */
export interface EmbeddingColumns {
  names: string[];
  values(chunk: Chunk): unknown[];
  casts: string[];
}

/** Upsert, delete and count on a chunk table: the SQL both adapters share. */
export class ChunkTable {
  constructor(
    private readonly db: Queryable,
    private readonly table: string,
    private readonly embedding: EmbeddingColumns,
  ) {}

  async upsert(chunks: readonly Chunk[]): Promise<void> {
    const { names } = this.embedding;
    for (const batch of batches(chunks)) {
      const { values, params } = valuesOf(
        batch,
        (c) => [
          c.collection,
          c.id,
          c.documentId,
          c.text,
          c.tokens,
          JSON.stringify(c.metadata),
          ...this.embedding.values(c),
        ],
        ['', '', '', '', '::int', '::jsonb', ...this.embedding.casts],
      );
      await this.db.query(
        `insert into ${this.table} (${CHUNK_COLUMNS}, ${names.join(', ')}) values ${values}
         on conflict (collection, id) do update set document_id = excluded.document_id, text = excluded.text,
           tokens = excluded.tokens, metadata = excluded.metadata,
           ${names.map((n) => `${n} = excluded.${n}`).join(', ')}`,
        params,
      );
    }
  }

  async deleteDocument(collection: string, documentId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `with gone as (delete from ${this.table} where collection = $1 and document_id = $2 returning 1)
       select count(*)::int as n from gone`,
      [collection, documentId],
    );
    return Number(rows[0].n);
  }

  async pruneDocument(collection: string, documentId: string, keepIds: readonly string[]): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `with gone as (delete from ${this.table} where collection = $1 and document_id = $2 and not (id = any($3::text[]))
         returning 1)
       select count(*)::int as n from gone`,
      [collection, documentId, [...keepIds]],
    );
    return Number(rows[0].n);
  }

  async deleteCollection(collection: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `with gone as (delete from ${this.table} where collection = $1 returning 1) select count(*)::int as n from gone`,
      [collection],
    );
    return Number(rows[0].n);
  }

  async count(collection: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `select count(*)::int as n from ${this.table} where collection = $1`,
      [collection],
    );
    return Number(rows[0].n);
  }
}

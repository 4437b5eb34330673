import { CHUNK_COLUMNS, ChunkTable, toHit, type ChunkRow } from '../sql-rows';
import { assertChunks, assertQuery } from '../validate';
import type { Chunk, Queryable, SearchHit, SearchQuery, VectorStore } from '../vector-store.port';

/** Whether this database can load pgvector (PGlite lists it once the extension is passed to it). */
export async function hasPgvector(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(`select 1 from pg_available_extensions where name = 'vector'`);
  return rows.length > 0;
}

const vectorLiteral = (v: readonly number[]) => `[${v.join(',')}]`;

/**
 * A VectorStore on pgvector: one table per embedding length (`kn_vectors_<n>`, a `vector(n)`
 * column), an HNSW index with `vector_cosine_ops`, and searches ordered by the cosine distance
 * `<=>` so the index answers them. The index is approximate; filters (collection, metadata)
 * apply to the candidates it returns (`hnsw.ef_search`, 40 by default), so a filter that
 * matches few chunks of a large table may return fewer than topK.
 */
export class PgvectorVectorStore implements VectorStore {
  readonly kind = 'pgvector' as const;
  readonly table: string;
  private readonly rows: ChunkTable;

  constructor(
    private readonly db: Queryable,
    readonly dimensions: number,
  ) {
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 2000) {
      throw new Error(`pgvector's HNSW index takes 1 to 2000 dimensions, not ${dimensions}`);
    }
    this.table = `kn_vectors_${dimensions}`;
    this.rows = new ChunkTable(db, this.table, {
      names: ['embedding'],
      values: (c) => [vectorLiteral(c.embedding)],
      casts: ['::vector'],
    });
  }

  async init(): Promise<void> {
    const t = this.table;
    await this.db.query('create extension if not exists vector');
    await this.db.query(
      `create table if not exists ${t} (
         collection text not null,
         id text not null,
         document_id text not null,
         text text not null,
         tokens integer not null,
         metadata jsonb not null default '{}',
         embedding vector(${this.dimensions}) not null,
         created_at timestamptz not null default now(),
         primary key (collection, id))`,
    );
    await this.db.query(`create index if not exists ${t}_document on ${t} (collection, document_id)`);
    await this.db.query(`create index if not exists ${t}_hnsw on ${t} using hnsw (embedding vector_cosine_ops)`);
  }

  async upsert(chunks: readonly Chunk[]): Promise<void> {
    assertChunks(chunks, this.dimensions);
    await this.rows.upsert(chunks);
  }

  deleteDocument(collection: string, documentId: string): Promise<number> {
    return this.rows.deleteDocument(collection, documentId);
  }

  pruneDocument(collection: string, documentId: string, keepIds: readonly string[]): Promise<number> {
    return this.rows.pruneDocument(collection, documentId, keepIds);
  }

  count(collection: string): Promise<number> {
    return this.rows.count(collection);
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    assertQuery(query, this.dimensions);
    // The inner query is ordered by the distance alone, so the HNSW index can serve it; the
    // threshold and the tie order by id apply to the topK it returns.
    const { rows } = await this.db.query<ChunkRow>(
      `select ${CHUNK_COLUMNS}, score from (
         select ${CHUNK_COLUMNS}, 1 - (embedding <=> $2::vector) as score
         from ${this.table}
         where collection = $1 and metadata @> $3::jsonb
         order by embedding <=> $2::vector
         limit $4) nearest
       where score >= $5
       order by score desc, id`,
      [
        query.collection,
        vectorLiteral(query.vector),
        JSON.stringify(query.filter ?? {}),
        query.topK,
        query.threshold ?? -2,
      ],
    );
    return rows.map(toHit);
  }
}

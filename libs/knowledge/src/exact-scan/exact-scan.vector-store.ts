import { CHUNK_COLUMNS, batches, toHit, valuesOf, type ChunkRow } from '../sql-rows';
import { assertChunks, assertQuery, norm } from '../validate';
import type { Chunk, Queryable, SearchHit, SearchQuery, VectorStore } from '../vector-store.port';

/** The table of migrations/…-knowledge.ts, also created by `init` where it is missing. */
export const EXACT_TABLE = 'kn_chunks';

export const EXACT_DDL = [
  `create table if not exists ${EXACT_TABLE} (
     collection text not null,
     id text not null,
     document_id text not null,
     text text not null,
     tokens integer not null,
     metadata jsonb not null default '{}',
     embedding real[] not null,
     norm double precision not null,
     created_at timestamptz not null default now(),
     primary key (collection, id))`,
  `create index if not exists ${EXACT_TABLE}_document on ${EXACT_TABLE} (collection, document_id)`,
];

/**
 * A VectorStore for PostgreSQL without pgvector: embeddings as `real[]` with their norm, and
 * a search that computes the cosine similarity of every chunk of the collection in SQL (an
 * exact scan: linear in the collection's size, no index).
 */
export class ExactScanVectorStore implements VectorStore {
  readonly kind = 'exact' as const;

  constructor(
    private readonly db: Queryable,
    readonly dimensions: number,
  ) {}

  async init(): Promise<void> {
    for (const statement of EXACT_DDL) await this.db.query(statement);
  }

  async upsert(chunks: readonly Chunk[]): Promise<void> {
    assertChunks(chunks, this.dimensions);
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
          c.embedding,
          norm(c.embedding),
        ],
        ['', '', '', '', '::int', '::jsonb', '::real[]', '::float8'],
      );
      await this.db.query(
        `insert into ${EXACT_TABLE} (${CHUNK_COLUMNS}, embedding, norm) values ${values}
         on conflict (collection, id) do update set document_id = excluded.document_id, text = excluded.text,
           tokens = excluded.tokens, metadata = excluded.metadata, embedding = excluded.embedding, norm = excluded.norm`,
        params,
      );
    }
  }

  async deleteDocument(collection: string, documentId: string): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(
      `with gone as (delete from ${EXACT_TABLE} where collection = $1 and document_id = $2 returning 1)
       select count(*)::int as n from gone`,
      [collection, documentId],
    );
    return Number(rows[0].n);
  }

  async count(collection: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `select count(*)::int as n from ${EXACT_TABLE} where collection = $1`,
      [collection],
    );
    return Number(rows[0].n);
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    assertQuery(query, this.dimensions);
    const { rows } = await this.db.query<ChunkRow>(
      `select ${CHUNK_COLUMNS}, score from (
         select ${CHUNK_COLUMNS},
           (select sum(a::float8 * b) from unnest(embedding, $2::float8[]) as t(a, b)) / (norm * $3) as score
         from ${EXACT_TABLE}
         where collection = $1 and metadata @> $4::jsonb) scored
       where score >= $5
       order by score desc, id
       limit $6`,
      [
        query.collection,
        query.vector,
        norm(query.vector),
        JSON.stringify(query.filter ?? {}),
        query.threshold ?? -2,
        query.topK,
      ],
    );
    return rows.map(toHit);
  }
}

import { CHUNK_COLUMNS, ChunkTable, toHit, type ChunkRow } from '../sql-rows';
import { assertChunks, assertQuery } from '../validate';
import type { Chunk, Queryable, SearchHit, SearchQuery, VectorStore } from '../vector-store.port';

/** Whether this database can load pgvector (PGlite lists it once the extension is passed to it). */
export async function hasPgvector(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(`select 1 from pg_available_extensions where name = 'vector'`);
  return rows.length > 0;
}

const vectorLiteral = (v: readonly number[]) => `[${v.join(',')}]`;

/** Rows written before the first ANALYZE of a new table. */
const ANALYZE_AFTER_ROWS = 500;

export interface PgvectorOptions {
  /** `hnsw.ef_search` of every search (at least its topK): candidates the index keeps. */
  efSearch?: number;
}

/** pgvector's own default `hnsw.ef_search`, used when no option is given. */
const DEFAULT_EF_SEARCH = 40;

/**
 * A VectorStore on pgvector: one table per embedding length (`kn_vectors_<n>`, a `vector(n)`
 * column), an HNSW index with `vector_cosine_ops`, and searches ordered by the cosine distance
 * `<=>` so the index answers them. The index is approximate: each search sets `hnsw.ef_search`
 * for itself (VECTOR_HNSW_EF_SEARCH), and an iterative scan (`relaxed_order`) goes on past the
 * first candidates when filters (collection, metadata) leave fewer than topK.
 *
 * The planner picks the index only when its statistics say the collection is large; an
 * embedded PGlite has no autovacuum to keep them, so the store analyzes its table after writes
 * that grew it by a tenth (and by 500 rows at least) since the last time. Without that, a search
 * of a collection loaded since start scans and sorts every row (100 k chunks: ~285 ms, against
 * ~2 ms through the index).
 */
export class PgvectorVectorStore implements VectorStore {
  readonly kind = 'pgvector' as const;
  readonly table: string;
  private readonly rows: ChunkTable;

  private readonly efSearch: number;
  /** Rows at the last ANALYZE (as counted then) and rows written since. */
  private analyzedRows = 0;
  private writtenSinceAnalyze = 0;
  private analyzing: Promise<void> | null = null;

  constructor(
    private readonly db: Queryable,
    readonly dimensions: number,
    options: PgvectorOptions = {},
  ) {
    this.efSearch = options.efSearch ?? DEFAULT_EF_SEARCH;
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
    this.writtenSinceAnalyze += chunks.length;
    if (this.writtenSinceAnalyze >= Math.max(ANALYZE_AFTER_ROWS, this.analyzedRows / 10)) await this.analyze();
  }

  /** Refreshes the planner's statistics of the table; one at a time, later writes count again. */
  private analyze(): Promise<void> {
    this.analyzing ??= (async () => {
      try {
        const written = this.writtenSinceAnalyze;
        await this.db.query(`analyze ${this.table}`);
        const { rows } = await this.db.query<{ n: string }>(
          `select reltuples::bigint as n from pg_class where oid = '${this.table}'::regclass`,
        );
        this.analyzedRows = Math.max(0, Number(rows[0]?.n ?? 0));
        this.writtenSinceAnalyze = Math.max(0, this.writtenSinceAnalyze - written);
      } finally {
        this.analyzing = null;
      }
    })();
    return this.analyzing;
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
    // The settings hold for this statement only (set_config's is_local in its own transaction);
    // the inner query's limit reads them, so it runs after they are set. It is ordered by the
    // distance alone, so the HNSW index can serve it; the threshold and the tie order by id
    // apply to the topK it returns.
    const { rows } = await this.db.query<ChunkRow>(
      `with settings as materialized (
         select set_config('hnsw.ef_search', $6, true) as ef,
                set_config('hnsw.iterative_scan', 'relaxed_order', true) as scan)
       select ${CHUNK_COLUMNS}, score from settings, lateral (
         select ${CHUNK_COLUMNS}, 1 - (embedding <=> $2::vector) as score
         from ${this.table}
         where collection = $1 and metadata @> $3::jsonb
         order by embedding <=> $2::vector
         limit case when settings.ef is not null and settings.scan is not null then $4::int end) nearest
       where score >= $5
       order by score desc, id`,
      [
        query.collection,
        vectorLiteral(query.vector),
        JSON.stringify(query.filter ?? {}),
        query.topK,
        query.threshold ?? -2,
        String(Math.max(this.efSearch, query.topK)),
      ],
    );
    return rows.map(toHit);
  }
}

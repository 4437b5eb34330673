import { LRUCache } from 'lru-cache';
import { CollectionVectors, collectionVersionsDdl } from '../collection-vectors';
import { CollectionGraphs, type CollectionGraphOptions, type GraphColumns } from '../graph/collection-graphs';
import { CHUNK_COLUMNS, ChunkTable, toHit, type ChunkRow } from '../sql-rows';
import { assertChunks, assertQuery } from '../validate';
import type { Chunk, Queryable, SearchHit, SearchQuery, VectorStore } from '../vector-store.port';

/** Whether this database can load pgvector (PGlite lists it once the extension is passed to it). */
export async function hasPgvector(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(`select 1 from pg_available_extensions where name = 'vector'`);
  return rows.length > 0;
}

const vectorLiteral = (v: readonly number[]) => `[${v.join(',')}]`;

/** Whether the database is an embedded PGlite (PostgreSQL compiled to WebAssembly). */
export async function isEmbedded(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ embedded: boolean }>(`select version() like '%emscripten%' as embedded`);
  return rows[0].embedded === true;
}

/** pgvector's binary form (`vector_send`): the dimensions and an unused word, then big-endian float4s. */
function decodeVector(value: unknown): Float32Array {
  const bytes = value as Uint8Array;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(view.getUint16(0));
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(4 + 4 * i);
  return vector;
}

const GRAPH_COLUMNS: GraphColumns = {
  embedding: 'vector_send(c.embedding)',
  decode: decodeVector,
  score: (vector) => ({ expression: '1 - (c.embedding <=> $2::vector)', value: vectorLiteral(vector) }),
};

/** Rows written before the first ANALYZE of a new table. */
const ANALYZE_AFTER_ROWS = 500;

export interface PgvectorOptions {
  /** `hnsw.ef_search` of every search (at least its topK): candidates the index keeps. */
  efSearch?: number;
  /** The HNSW index's `m` (links per node) when the store creates it. */
  m?: number;
  /** The HNSW index's `ef_construction` (candidates kept while a node is linked) when the store creates it. */
  efConstruction?: number;
  /** `maintenance_work_mem` of the index build, in MB: a graph larger than this is built far slower. */
  buildMemoryMb?: number;
  /** Collections with fewer chunks are searched exactly, without the index; 0: always the index. */
  exactBelow?: number;
  /**
   * MB of collections' vectors kept in this process for the exact search (CollectionVectors):
   * those searched exactly are ranked here; 0 (the default): every search in SQL.
   */
  cacheMb?: number;
  /**
   * Searches collections of `exactBelow` chunks or more through an HNSW graph of Parley's
   * (CollectionGraphs, in a child process) instead of pgvector's index, which is then not built: in PGlite's
   * WebAssembly, pgvector's index links about 270 chunks/s and misses the recall its searches
   * need within 20 ms at 100,000 chunks; the graph does both (bench/README.md).
   */
  graph?: Omit<CollectionGraphOptions, 'above'>;
}

/** pgvector's own defaults, used when no option is given. */
const DEFAULT_EF_SEARCH = 40;
const DEFAULT_M = 16;
const DEFAULT_EF_CONSTRUCTION = 64;
const DEFAULT_BUILD_MEMORY_MB = 64;

/** How long a collection's counted size stands before a search counts it again, and how many are kept. */
const SIZE_TTL_MS = 30_000;
const SIZES_KEPT = 1000;

/**
 * A VectorStore on pgvector: one table per embedding length (`kn_vectors_<n>`, a `vector(n)`
 * column), an HNSW index with `vector_cosine_ops` (VECTOR_HNSW_M, VECTOR_HNSW_EF_CONSTRUCTION),
 * and searches ordered by the cosine distance `<=>` so the index answers them. The index is
 * approximate: each search sets `hnsw.ef_search` for itself (VECTOR_HNSW_EF_SEARCH), and an
 * iterative scan (`relaxed_order`) goes on past the first candidates when filters (collection,
 * metadata) leave fewer than topK. A collection of fewer than `exactBelow` chunks
 * (VECTOR_EXACT_BELOW) is searched exactly instead, and the index is built only once the table
 * holds that many.
 *
 * The planner picks the index only when its statistics say the collection is large; an
 * embedded PGlite has no autovacuum to keep them, so the store analyzes its table after writes
 * that grew it by a tenth (and by 500 rows at least) since the last time. Without that, a search
 * of a collection loaded since start scans and sorts every row (100 k chunks: ~285 ms, against
 * ~2 ms through the index).
 *
 * With `graph`, collections past `exactBelow` are searched through an HNSW graph of Parley's
 * instead (CollectionGraphs, in a child process) and pgvector's index is not built; while a graph is being built or
 * brought up to date, the statement above answers (through an index built earlier, else by a
 * scan of the collection).
 */
export class PgvectorVectorStore implements VectorStore {
  readonly kind = 'pgvector' as const;
  readonly table: string;
  private readonly rows: ChunkTable;
  /** The vectors of collections searched exactly, ranked in process. */
  private readonly vectors: CollectionVectors;
  /** The HNSW graphs of large collections, when they are searched through Parley's own. */
  readonly graphs: CollectionGraphs | null;

  private readonly efSearch: number;
  private readonly m: number;
  private readonly efConstruction: number;
  private readonly buildMemoryMb: number;
  private readonly exactBelow: number;
  /** Chunks per collection as last counted, and when: the search chooses the exact scan or the index by it. */
  private readonly sizes = new LRUCache<string, number>({ max: SIZES_KEPT, ttl: SIZE_TTL_MS });
  /** Whether the HNSW index exists (checked at init; the store never drops it). */
  private indexed = false;
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
    this.m = options.m ?? DEFAULT_M;
    this.efConstruction = options.efConstruction ?? DEFAULT_EF_CONSTRUCTION;
    this.buildMemoryMb = options.buildMemoryMb ?? DEFAULT_BUILD_MEMORY_MB;
    this.exactBelow = options.exactBelow ?? 0;
    if (!Number.isInteger(this.m) || this.m < 2 || this.m > 100) {
      throw new Error(`pgvector's HNSW m is 2 to 100, not ${this.m}`);
    }
    if (!Number.isInteger(this.efConstruction) || this.efConstruction < 2 * this.m || this.efConstruction > 1000) {
      throw new Error(`pgvector's HNSW ef_construction is 2 × m (${2 * this.m}) to 1000, not ${this.efConstruction}`);
    }
    if (!Number.isInteger(this.buildMemoryMb) || this.buildMemoryMb < 1) {
      throw new Error(`the HNSW build memory is a whole number of MB, not ${this.buildMemoryMb}`);
    }
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 2000) {
      throw new Error(`pgvector's HNSW index takes 1 to 2000 dimensions, not ${dimensions}`);
    }
    this.table = `kn_vectors_${dimensions}`;
    this.rows = new ChunkTable(db, this.table, {
      names: ['embedding'],
      values: (c) => [vectorLiteral(c.embedding)],
      casts: ['::vector'],
    });
    this.vectors = new CollectionVectors(
      db,
      this.table,
      dimensions,
      { column: 'embedding::text', norm: null },
      options.cacheMb ?? 0,
    );
    this.graphs = options.graph
      ? new CollectionGraphs(db, this.table, dimensions, GRAPH_COLUMNS, { ...options.graph, above: this.exactBelow })
      : null;
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
    for (const statement of collectionVersionsDdl(t)) await this.db.query(statement);
    this.indexed = await this.hasIndex();
    await this.indexWhenLarge();
  }

  /**
   * Builds the index once the table holds `exactBelow` chunks: until then every collection in it
   * is searched exactly, and a chunk written costs no graph insert (in PGlite's WebAssembly, most
   * of a write), so a first load goes in fast and the graph is built over it in one pass.
   */
  private async indexWhenLarge(): Promise<void> {
    if (this.indexed || this.graphs) return;
    if (this.exactBelow > 0) {
      const { rows } = await this.db.query<{ n: number }>(`select count(*)::int as n from ${this.table}`);
      if (Number(rows[0].n) < this.exactBelow) return;
    }
    await this.createIndex().catch(async (err: unknown) => {
      // Another process built it at the same time: its index is the one to keep.
      if (!(await this.hasIndex())) throw err;
      this.indexed = true;
    });
  }

  private async hasIndex(): Promise<boolean> {
    const { rows } = await this.db.query(`select 1 from pg_indexes where tablename = $1 and indexname = $2`, [
      this.table,
      `${this.table}_hnsw`,
    ]);
    return rows.length > 0;
  }

  /**
   * The HNSW index, when missing, with this store's `m` and `ef_construction`; an index that
   * exists keeps the parameters it was built with. The build's `maintenance_work_mem` holds for
   * its own transaction (one DO block, so a pool's connection or PGlite's one session keeps no
   * trace of it).
   */
  async createIndex(): Promise<void> {
    const t = this.table;
    await this.db.query(
      `do $$ begin
         perform set_config('maintenance_work_mem', '${this.buildMemoryMb}MB', true);
         execute 'create index if not exists ${t}_hnsw on ${t} using hnsw (embedding vector_cosine_ops)
                  with (m = ${this.m}, ef_construction = ${this.efConstruction})';
       end $$`,
    );
    this.indexed = true;
  }

  async upsert(chunks: readonly Chunk[]): Promise<void> {
    assertChunks(chunks, this.dimensions);
    await this.rows.upsert(chunks);
    for (const c of chunks) this.sizes.delete(c.collection);
    await this.indexWhenLarge();
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
    this.sizes.delete(collection);
    return this.rows.deleteDocument(collection, documentId);
  }

  pruneDocument(collection: string, documentId: string, keepIds: readonly string[]): Promise<number> {
    this.sizes.delete(collection);
    return this.rows.pruneDocument(collection, documentId, keepIds);
  }

  deleteCollection(collection: string): Promise<number> {
    this.sizes.delete(collection);
    return this.rows.deleteCollection(collection);
  }

  count(collection: string): Promise<number> {
    return this.rows.count(collection);
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    assertQuery(query, this.dimensions);
    if (this.exactBelow > 0 && (await this.sizeOf(query.collection)) < this.exactBelow)
      return (await this.vectors.search(query)) ?? this.exactSearch(query);
    const graphed = this.graphs && (await this.graphs.search(query));
    if (graphed) return graphed;
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

  /**
   * Every chunk of the collection that passes the filter and the threshold, ranked by its cosine
   * similarity: ordered by the score, not by `<=>`, so the HNSW index cannot serve it and the
   * top-K is exact. Below a few thousand chunks this is faster than the index (bench/README.md).
   */
  private async exactSearch(query: SearchQuery): Promise<SearchHit[]> {
    const { rows } = await this.db.query<ChunkRow>(
      `select ${CHUNK_COLUMNS}, score from (
         select ${CHUNK_COLUMNS}, 1 - (embedding <=> $2::vector) as score
         from ${this.table}
         where collection = $1 and metadata @> $3::jsonb) scored
       where score >= $5
       order by score desc, id
       limit $4`,
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

  /** The collection's chunks as counted at most SIZE_TTL_MS ago (this store's own writes recount). */
  private async sizeOf(collection: string): Promise<number> {
    const known = this.sizes.get(collection);
    if (known !== undefined) return known;
    const n = await this.rows.count(collection);
    this.sizes.set(collection, n);
    return n;
  }
}

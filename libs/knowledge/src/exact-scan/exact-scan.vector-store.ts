import { CollectionVectors, collectionVersionsDdl } from '../collection-vectors';
import { CollectionGraphs, type CollectionGraphOptions, type GraphColumns } from '../graph/collection-graphs';
import { CHUNK_COLUMNS, ChunkTable, toHit, type ChunkRow } from '../sql-rows';
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
  ...collectionVersionsDdl(EXACT_TABLE),
];

const GRAPH_COLUMNS: GraphColumns = {
  embedding: 'c.embedding',
  decode: (value) => Float32Array.from(value as number[]),
  score: (vector) => ({
    expression: `(select sum(a::float8 * b) from unnest(c.embedding, $2::float8[]) as t(a, b)) / (c.norm * ${norm(vector)})`,
    value: vector,
  }),
};

/**
 * A VectorStore for PostgreSQL without pgvector: embeddings as `real[]` with their norm, and
 * a search that computes the cosine similarity of every chunk of the collection (an exact scan:
 * linear in the collection's size, no index): in process over the collection's vectors read once
 * (CollectionVectors, `cacheMb`), else in SQL. With `graph`, collections of `graph.above` chunks
 * or more are searched through an HNSW graph of Parley's (CollectionGraphs, in a child process) once it is built.
 */
export class ExactScanVectorStore implements VectorStore {
  readonly kind = 'exact' as const;

  private readonly rows: ChunkTable;
  private readonly vectors: CollectionVectors;
  /** The HNSW graphs of large collections, when given. */
  readonly graphs: CollectionGraphs | null;

  constructor(
    private readonly db: Queryable,
    readonly dimensions: number,
    /** MB of collections' vectors kept in this process for the search; 0: every search in SQL. */
    cacheMb = 0,
    graph?: CollectionGraphOptions,
  ) {
    this.graphs = graph ? new CollectionGraphs(db, EXACT_TABLE, dimensions, GRAPH_COLUMNS, graph) : null;
    this.vectors = new CollectionVectors(db, EXACT_TABLE, dimensions, { column: 'embedding', norm: 'norm' }, cacheMb);
    this.rows = new ChunkTable(db, EXACT_TABLE, {
      names: ['embedding', 'norm'],
      values: (c) => [c.embedding, norm(c.embedding)],
      casts: ['::real[]', '::float8'],
    });
  }

  async init(): Promise<void> {
    for (const statement of EXACT_DDL) await this.db.query(statement);
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

  deleteCollection(collection: string): Promise<number> {
    return this.rows.deleteCollection(collection);
  }

  count(collection: string): Promise<number> {
    return this.rows.count(collection);
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    assertQuery(query, this.dimensions);
    const graphed = this.graphs && (await this.graphs.search(query));
    if (graphed) return graphed;
    const kept = await this.vectors.search(query);
    if (kept) return kept;
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

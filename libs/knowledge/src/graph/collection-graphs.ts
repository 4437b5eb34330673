import { LRUCache } from 'lru-cache';
import { collectionVersion, collectionVersionSql } from '../collection-vectors';
import { toHit, type ChunkRow } from '../sql-rows';
import type { Queryable, SearchHit, SearchQuery } from '../vector-store.port';
import type { GraphProcess } from './graph-process';

/** How a store reads its embeddings for a graph and scores candidates in SQL. */
export interface GraphColumns {
  /** The SQL expression of a row's embedding as `decode` takes it (in the table aliased `c`). */
  embedding: string;
  decode(value: unknown): Float32Array;
  /**
   * The SQL expression of a row's cosine similarity to the query (the table aliased `c`), the
   * query as `$2`, and the value to pass as `$2`.
   */
  score(vector: readonly number[]): { expression: string; value: unknown };
}

export interface CollectionGraphOptions {
  /** The child process that holds the graphs (one for all of a resolver's stores). */
  worker: GraphProcess;
  /** Collections of at least this many chunks get a graph (smaller ones: the store's exact search). */
  above: number;
  /** MB of graphs this store keeps; the least recently searched goes first. */
  megabytes: number;
  /** Reports a graph that could not be built (the store searches without it). */
  onError?: (collection: string, err: unknown) => void;
  /**
   * A search waits for the graph to be built or brought up to date instead of answering without
   * it (the contract suite, benchmarks); updates then follow writes without a pause between them.
   */
  wait?: boolean;
}

/** A graph missing or at another version than the collection's: an update is under way. */
const BEHIND = Symbol('behind');

/**
 * The HNSW parameters, measured on bench:retrieval's 100,000-chunk corpus (256 dimensions):
 * recall@4 0.98 against the exact scan at a search p95 of about 3 ms, and a graph linked at
 * about 1,800 chunks/s on one core (bench/README.md).
 */
export const GRAPH_M = 32;
export const GRAPH_EF_CONSTRUCTION = 128;
export const GRAPH_EF_SEARCH = 512;
/** Candidates a search takes from the graph (at least four times its topK) and scores exactly. */
const CANDIDATES = 40;

/** Rows per statement while a graph reads its collection, and vectors per call into the graph process. */
const PAGE_ROWS = 2_000;
const ADD_SLICE = 128;
/** Bytes a chunk takes in a graph besides its int8 vector: its links and its id, roughly. */
const CHUNK_BYTES = GRAPH_M * 12 + 120;
/** How long a collection found small, too large or failing rests before it is counted again. */
const REST_MS = 30_000;
/** The least time between two updates of a graph; an update that took long waits twice its time. */
const MIN_REFRESH_MS = 1_000;
/** Past this share of keys removed or replaced, a graph is built anew rather than patched. */
const REBUILD_SHARE = 0.5;

interface Graph {
  /** The graph's number in the worker. */
  handle: number;
  /** The collection version the graph answers for. */
  version: string;
  /** Key → chunk id; '' where the chunk went. */
  ids: string[];
  /** Chunk id → its key and the hash of the embedding it was linked with. */
  keys: Map<string, { key: number; hash: number }>;
  /** Keys removed since the graph was built. */
  removed: number;
  /** While true the worker is changing the graph: searches go elsewhere. */
  mutating: boolean;
  /** No update starts before this (Date.now()). */
  notBefore: number;
}

/** FNV-1a over the vector's bytes: whether a chunk's embedding changed since it was linked. */
function hashOf(vector: Float32Array): number {
  const words = new Uint32Array(vector.buffer, vector.byteOffset, vector.length);
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) {
    h ^= words[i];
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Approximate nearest-neighbour search for collections stored in SQL: an HNSW graph
 * per large collection (usearch, in GraphProcess's child process), built from the collection's
 * embeddings and kept against the collection's version (collectionVersionsDdl), which every
 * write from any process moves on. A search takes the graph's nearest candidates, and one
 * statement reads them with their exact score and the version: at another version the store
 * searches its own way and the graph is brought up to date in the background (only the chunks
 * added, changed or removed are relinked), so a search never answers from stale chunks.
 * Searches return null whenever the graph cannot answer (small collection, being built or
 * patched, over the memory budget, a filter that left fewer than topK candidates).
 */
export class CollectionGraphs {
  private readonly graphs: LRUCache<string, Graph>;
  /** Collections not worth a graph (small), over the budget, or whose build failed, for a while. */
  private readonly resting = new LRUCache<string, true>({ max: 10_000, ttl: REST_MS });
  private readonly updating = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Queryable,
    private readonly table: string,
    private readonly dimensions: number,
    private readonly columns: GraphColumns,
    private readonly options: CollectionGraphOptions,
  ) {
    this.graphs = new LRUCache<string, Graph>({
      maxSize: Math.max(1, Math.floor(options.megabytes * 1024 * 1024)),
      sizeCalculation: (graph) => Math.max(1, this.bytesOf(graph.ids.length)),
      dispose: (graph) => this.options.worker.drop(graph.handle),
    });
  }

  private bytesOf(chunks: number): number {
    return chunks * (this.dimensions + CHUNK_BYTES);
  }

  /** The hits, best first (ties by id), from the collection's graph; null where it cannot answer. */
  async search(query: SearchQuery): Promise<SearchHit[] | null> {
    const answer = await this.fromGraph(query);
    if (answer !== BEHIND || !this.options.wait) return answer === BEHIND ? null : answer;
    await this.updating.get(query.collection);
    const again = await this.fromGraph(query);
    return again === BEHIND ? null : again;
  }

  private async fromGraph(query: SearchQuery): Promise<SearchHit[] | null | typeof BEHIND> {
    const collection = query.collection;
    if (this.resting.has(collection)) return null;
    const graph = this.graphs.get(collection);
    if (!graph || graph.mutating) return this.refresh(collection);
    const count = Math.max(CANDIDATES, query.topK * 4);
    let keys: number[];
    try {
      keys = await this.options.worker.search(graph.handle, Float32Array.from(query.vector), count);
    } catch {
      // The process ended with its graphs: built again.
      this.graphs.delete(collection);
      return this.refresh(collection);
    }
    const ids = keys.map((key) => graph.ids[key]).filter((id) => id);
    const score = this.columns.score(query.vector);
    const { rows } = await this.db.query<ChunkRow & { version: string }>(
      `select v.version::text as version, c.collection, c.id, c.document_id, c.text, c.tokens, c.metadata,
              ${score.expression} as score
         from (select ${collectionVersionSql(this.table)} as version) v
         left join ${this.table} c on c.collection = $1 and c.id = any($3::text[]) and c.metadata @> $4::jsonb`,
      [collection, score.value, ids, JSON.stringify(query.filter ?? {})],
    );
    if (rows[0].version !== graph.version) return this.refresh(collection);
    const floor = query.threshold ?? -2;
    const hits = rows
      .filter((row) => row.id !== null)
      .map(toHit)
      .filter((hit) => hit.score >= floor)
      .sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0));
    // A filter that left fewer than topK of a full set of candidates: the next ones may match.
    const filtered = Object.keys(query.filter ?? {}).length > 0;
    if (filtered && hits.length < query.topK && keys.length === count) return null;
    return hits.slice(0, query.topK);
  }

  /** Starts bringing the collection's graph to its current version, unless one is under way or resting. */
  private refresh(collection: string): typeof BEHIND {
    if (this.updating.has(collection) || this.resting.has(collection)) return BEHIND;
    const graph = this.graphs.peek(collection);
    if (graph && !this.options.wait && Date.now() < graph.notBefore) return BEHIND;
    const run = this.update(collection, graph)
      .catch((err: unknown) => {
        this.graphs.delete(collection);
        this.resting.set(collection, true);
        this.options.onError?.(collection, err);
      })
      .finally(() => this.updating.delete(collection));
    this.updating.set(collection, run);
    return BEHIND;
  }

  /** Waits for the updates under way (tests and benchmarks: a graph is ready after a search and this). */
  async settled(): Promise<void> {
    while (this.updating.size > 0) await Promise.all(this.updating.values());
  }

  private async update(collection: string, graph: Graph | undefined): Promise<void> {
    const started = Date.now();
    const { rows: counted } = await this.db.query<{ n: number }>(
      `select count(*)::int as n from ${this.table} where collection = $1`,
      [collection],
    );
    const size = Number(counted[0].n);
    if (size < this.options.above || this.bytesOf(size) > this.graphs.maxSize) {
      this.graphs.delete(collection);
      this.resting.set(collection, true);
      return;
    }
    // The version before the first page: a write committed during the reading moves it past this,
    // so the graph never answers for a state it did not read; the next update catches up.
    const version = await collectionVersion(this.db, this.table, collection);
    const next =
      graph && graph.removed < REBUILD_SHARE * graph.ids.length
        ? await this.patch(collection, graph)
        : await this.build(collection);
    if (!next) return this.update(collection, undefined);
    next.version = version;
    next.notBefore = Date.now() + Math.max(MIN_REFRESH_MS, 2 * (Date.now() - started));
    if (next !== graph) this.graphs.set(collection, next);
    // Its size changed: set again so the budget counts it.
    else this.graphs.set(collection, next, { noDisposeOnSet: true });
  }

  /** Each page of the collection's ids and embeddings, in id order. */
  private async eachPage(
    collection: string,
    visit: (rows: { id: string; vector: Float32Array }[]) => Promise<void>,
  ): Promise<void> {
    let after = '';
    for (;;) {
      const { rows } = await this.db.query<{ id: string; embedding: unknown }>(
        `select id, ${this.columns.embedding} as embedding from ${this.table} c
          where collection = $1 and id > $2 order by id limit ${PAGE_ROWS}`,
        [collection, after],
      );
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      await visit(rows.map((row) => ({ id: row.id, vector: this.columns.decode(row.embedding) })));
      if (rows.length < PAGE_ROWS) return;
    }
  }

  /** A new graph of the collection's chunks, linked page by page. */
  private async build(collection: string): Promise<Graph> {
    const worker = this.options.worker;
    const handle = await worker.create({
      dimensions: this.dimensions,
      m: GRAPH_M,
      efConstruction: GRAPH_EF_CONSTRUCTION,
      efSearch: GRAPH_EF_SEARCH,
    });
    const graph: Graph = { handle, version: '', ids: [], keys: new Map(), removed: 0, mutating: false, notBefore: 0 };
    try {
      await this.eachPage(collection, (rows) =>
        this.link(
          graph,
          rows.map((row) => ({ ...row, hash: hashOf(row.vector) })),
        ),
      );
    } catch (err) {
      worker.drop(handle);
      throw err;
    }
    return graph;
  }

  /**
   * The graph brought to the collection as it is now: chunks added or whose embedding changed are
   * linked (a changed one under a new key), chunks gone are removed. Reads first, then changes the
   * graph (searches meanwhile answer from it as it was, at its version); null when so much changed
   * that a new graph is better.
   */
  private async patch(collection: string, graph: Graph): Promise<Graph | null> {
    const changed: { id: string; vector: Float32Array; hash: number }[] = [];
    const seen = new Set<string>();
    await this.eachPage(collection, async (rows) => {
      for (const row of rows) {
        seen.add(row.id);
        const hash = hashOf(row.vector);
        if (graph.keys.get(row.id)?.hash !== hash) changed.push({ ...row, hash });
      }
    });
    const relinked = new Set(changed.map((row) => row.id));
    const gone: number[] = [];
    for (const [id, { key }] of graph.keys) if (!seen.has(id) || relinked.has(id)) gone.push(key);
    if (graph.removed + gone.length > REBUILD_SHARE * (graph.ids.length + changed.length)) return null;
    graph.mutating = true;
    try {
      if (gone.length > 0) {
        await this.options.worker.remove(graph.handle, BigUint64Array.from(gone, BigInt));
        for (const key of gone) {
          graph.keys.delete(graph.ids[key]);
          graph.ids[key] = '';
        }
        graph.removed += gone.length;
      }
      await this.link(graph, changed);
    } finally {
      graph.mutating = false;
    }
    return graph;
  }

  /** Links chunks under new keys, a slice per call so that other graphs' searches get a turn. */
  private async link(graph: Graph, rows: { id: string; vector: Float32Array; hash: number }[]): Promise<void> {
    const d = this.dimensions;
    for (let at = 0; at < rows.length; at += ADD_SLICE) {
      const slice = rows.slice(at, at + ADD_SLICE);
      const keys = new BigUint64Array(slice.length);
      const vectors = new Float32Array(slice.length * d);
      slice.forEach((row, i) => {
        const key = graph.ids.length;
        graph.ids.push(row.id);
        graph.keys.set(row.id, { key, hash: row.hash });
        keys[i] = BigInt(key);
        vectors.set(row.vector, i * d);
      });
      await this.options.worker.add(graph.handle, keys, vectors);
    }
  }
}

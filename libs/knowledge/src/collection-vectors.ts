import { LRUCache } from 'lru-cache';
import { toHit, type ChunkRow } from './sql-rows';
import type { MetadataValue, Queryable, SearchHit, SearchQuery } from './vector-store.port';

/**
 * The DDL that versions a chunk table's collections: `<table>_versions` holds a number per
 * collection that every statement writing its chunks moves on (statement triggers, so a writer in
 * any process, and any SQL, moves it). A process that keeps a collection's vectors in memory
 * compares it with the one it read them at.
 */
export function collectionVersionsDdl(table: string): string[] {
  const versions = `${table}_versions`;
  const bump = `${table}_bump_version`;
  const trigger = (event: 'insert' | 'update' | 'delete') =>
    `create or replace trigger ${table}_${event}_version after ${event} on ${table}
       referencing ${event === 'delete' ? 'old' : 'new'} table as changed
       for each statement execute function ${bump}()`;
  return [
    `create table if not exists ${versions} (collection text primary key, version bigint not null)`,
    `create sequence if not exists ${versions}_seq`,
    `create or replace function ${bump}() returns trigger language plpgsql as $$
     begin
       insert into ${versions} (collection, version)
         select collection, nextval('${versions}_seq') from (select distinct collection from changed) c
         on conflict (collection) do update set version = excluded.version;
       return null;
     end $$`,
    trigger('insert'),
    trigger('update'),
    trigger('delete'),
  ];
}

/** A collection's vectors as read at `version`: row i is `ids[i]`, its embedding at `i × dimensions`. */
interface KeptCollection {
  version: string;
  ids: string[];
  metadata: Record<string, MetadataValue>[];
  vectors: Float32Array;
  norms: Float64Array;
}

/** A chunk row as `load` reads it: the embedding as the adapter stores it, and its norm when kept. */
export interface VectorRow {
  version: string;
  id: string | null;
  metadata: Record<string, MetadataValue> | null;
  embedding: number[] | string | null;
  norm?: number | null;
}

/** Bytes a kept chunk takes besides its vector, roughly: its norm, id and metadata. */
const ROW_BYTES = 160;
const sizeOf = (kept: KeptCollection) => Math.max(1, kept.vectors.byteLength + kept.ids.length * ROW_BYTES);

/** How long a collection found too large to keep is searched in SQL before it is counted again. */
const TOO_LARGE_TTL_MS = 60_000;

const matches = (metadata: Record<string, MetadataValue>, filter: Record<string, MetadataValue> | undefined) =>
  !filter || Object.entries(filter).every(([key, value]) => key in metadata && metadata[key] === value);

/**
 * Exact search in process over the vectors of collections read once and kept (VECTOR_CACHE_MB
 * for each vector store): a search computes every chunk's cosine similarity here, then reads
 * only its top K rows, with the collection's version. A version moved on since (another writer,
 * anywhere) reads the vectors again before answering, so a search never answers from stale
 * vectors. Over the exact scan's `real[]` in SQL this turns tens of milliseconds at a thousand
 * chunks into about one; over pgvector's exact scan in PGlite's WebAssembly, a few into one.
 * A collection larger than the whole budget is not kept: `search` answers null, and the adapter
 * searches in SQL.
 */
export class CollectionVectors {
  private readonly kept: LRUCache<string, KeptCollection> | null;
  private readonly tooLarge = new LRUCache<string, true>({ max: 1_000, ttl: TOO_LARGE_TTL_MS });

  constructor(
    private readonly db: Queryable,
    private readonly table: string,
    private readonly dimensions: number,
    /** The SQL expression of the embedding to read (pgvector's as text). */
    private readonly embedding: { column: string; norm: string | null },
    megabytes: number,
  ) {
    this.kept =
      megabytes > 0
        ? new LRUCache<string, KeptCollection>({
            maxSize: Math.max(1, Math.floor(megabytes * 1024 * 1024)),
            sizeCalculation: sizeOf,
          })
        : null;
  }

  /** Drops what is kept of a collection this process just wrote (its version moved on anyway). */
  forget(collection: string): void {
    this.kept?.delete(collection);
  }

  /** The hits, best first (ties by id); null where nothing may be kept (no budget, too large). */
  async search(query: SearchQuery): Promise<SearchHit[] | null> {
    if (!this.kept) return null;
    for (let attempt = 0; attempt < 2; attempt++) {
      const kept = this.kept.get(query.collection) ?? (await this.load(query.collection));
      if (!kept) return null;
      const top = this.rank(kept, query);
      const { rows } = await this.db.query<ChunkRow & { version: string }>(
        `select v.version::text as version, c.collection, c.id, c.document_id, c.text, c.tokens, c.metadata
           from (select coalesce((select version from ${this.table}_versions where collection = $1), 0) as version) v
           left join ${this.table} c on c.collection = $1 and c.id = any($2::text[])`,
        [query.collection, top.map((t) => kept.ids[t.row])],
      );
      if (rows[0].version !== kept.version) {
        this.kept.delete(query.collection);
        continue;
      }
      const byId = new Map(rows.filter((r) => r.id !== null).map((r) => [r.id, r]));
      return top.map((t) => toHit({ ...byId.get(kept.ids[t.row])!, score: t.score }));
    }
    return null;
  }

  /** The top K rows by cosine similarity at or above the threshold, ties by id. */
  private rank(kept: KeptCollection, query: SearchQuery): { row: number; score: number }[] {
    const d = this.dimensions;
    const q = query.vector;
    let qNorm = 0;
    for (let i = 0; i < d; i++) qNorm += q[i] * q[i];
    qNorm = Math.sqrt(qNorm);
    const floor = query.threshold ?? -2;
    const before = (a: { row: number; score: number }, b: { row: number; score: number }) =>
      a.score > b.score || (a.score === b.score && kept.ids[a.row] < kept.ids[b.row]);
    const top: { row: number; score: number }[] = [];
    const { vectors, norms } = kept;
    for (let row = 0; row < kept.ids.length; row++) {
      if (!matches(kept.metadata[row], query.filter)) continue;
      let dot = 0;
      const at = row * d;
      for (let i = 0; i < d; i++) dot += vectors[at + i] * q[i];
      const score = dot / (norms[row] * qNorm);
      if (!(score >= floor)) continue;
      const hit = { row, score };
      if (top.length === query.topK && !before(hit, top[top.length - 1])) continue;
      let i = Math.min(top.length, query.topK - 1);
      top[i] = hit;
      while (i > 0 && before(top[i], top[i - 1])) {
        [top[i], top[i - 1]] = [top[i - 1], top[i]];
        i--;
      }
    }
    return top;
  }

  /** Reads a collection's vectors with its version (one statement: one snapshot), and keeps them. */
  private async load(collection: string): Promise<KeptCollection | null> {
    const budget = this.kept!.maxSize;
    if (this.tooLarge.has(collection)) return null;
    const { rows: counted } = await this.db.query<{ n: number }>(
      `select count(*)::int as n from ${this.table} where collection = $1`,
      [collection],
    );
    if (Number(counted[0].n) * (this.dimensions * 4 + ROW_BYTES) > budget) {
      this.tooLarge.set(collection, true);
      return null;
    }
    const { rows } = await this.db.query<VectorRow>(
      `select v.version::text as version, c.id, c.metadata, c.${this.embedding.column} as embedding
              ${this.embedding.norm ? `, c.${this.embedding.norm} as norm` : ''}
         from (select coalesce((select version from ${this.table}_versions where collection = $1), 0) as version) v
         left join ${this.table} c on c.collection = $1`,
      [collection],
    );
    const present = rows.filter((r) => r.id !== null);
    const d = this.dimensions;
    const kept: KeptCollection = {
      version: rows[0].version,
      ids: present.map((r) => r.id!),
      metadata: present.map((r) => r.metadata ?? {}),
      vectors: new Float32Array(present.length * d),
      norms: new Float64Array(present.length),
    };
    // Grown past the budget since it was counted: searched in SQL, and counted again later.
    if (sizeOf(kept) > budget) {
      this.tooLarge.set(collection, true);
      return null;
    }
    present.forEach((r, row) => {
      const values = typeof r.embedding === 'string' ? (JSON.parse(r.embedding) as number[]) : r.embedding!;
      kept.vectors.set(values, row * d);
      let norm = r.norm ?? null;
      if (norm === null) {
        norm = 0;
        for (let i = 0; i < d; i++) norm += kept.vectors[row * d + i] ** 2;
        norm = Math.sqrt(norm);
      }
      kept.norms[row] = Number(norm);
    });
    this.kept!.set(collection, kept);
    return kept;
  }
}

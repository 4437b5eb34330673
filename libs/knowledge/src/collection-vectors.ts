import { LRUCache } from 'lru-cache';
import { toHit, type ChunkRow } from './sql-rows';
import type { MetadataValue, Queryable, SearchHit, SearchQuery } from './vector-store.port';

/**
 * The DDL that versions a chunk table's collections: `<table>_versions` holds a number per
 * collection that every statement writing its chunks moves on (statement triggers, so a writer in
 * any process, and any SQL, moves it; a TRUNCATE moves every collection's). A process that keeps
 * a collection's chunks in memory compares it with the one it read them at.
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
    // TRUNCATE fires no delete trigger: it moves every collection's version on.
    `create or replace function ${bump}_all() returns trigger language plpgsql as $$
     begin
       update ${versions} set version = nextval('${versions}_seq');
       return null;
     end $$`,
    `create or replace trigger ${table}_truncate_version after truncate on ${table}
       for each statement execute function ${bump}_all()`,
  ];
}

/** The SQL of a collection's version (`$1`), 0 before its first write; as a subquery or a statement. */
export const collectionVersionSql = (table: string) =>
  `coalesce((select version from ${table}_versions where collection = $1), 0)`;

/** A collection's version as `<table>_versions` holds it now. */
export async function collectionVersion(db: Queryable, table: string, collection: string): Promise<string> {
  const { rows } = await db.query<{ version: string }>(`select ${collectionVersionSql(table)}::text as version`, [
    collection,
  ]);
  return rows[0].version;
}

/** A collection's chunks as read at `version`: chunk i's embedding is at `i × dimensions`. */
interface KeptCollection {
  version: string;
  chunks: SearchHit['chunk'][];
  vectors: Float32Array;
  norms: Float64Array;
  bytes: number;
}

/** A chunk row as `load` reads it: the embedding as the adapter stores it, and its norm when kept. */
interface VectorRow extends Omit<ChunkRow, 'score'> {
  embedding: number[] | string;
  norm?: number | null;
}

/** Bytes a kept chunk takes besides its vector and text, roughly: its norm, ids and metadata. */
const ROW_BYTES = 200;

/** How long a collection found too large to keep is searched in SQL before it is counted again. */
const TOO_LARGE_TTL_MS = 60_000;

const matches = (metadata: Record<string, MetadataValue>, filter: Record<string, MetadataValue> | undefined) =>
  !filter || Object.entries(filter).every(([key, value]) => key in metadata && metadata[key] === value);

/**
 * Exact search in process over collections read once and kept (VECTOR_CACHE_MB for each vector
 * store): a search asks the database only for the collection's version, computes every chunk's
 * cosine similarity here, and answers with the kept chunks. A version moved on since (another
 * writer, anywhere) reads the collection again before answering, so a search never answers from
 * stale chunks. Over the exact scan's `real[]` in SQL this turns tens of milliseconds at a
 * thousand chunks into about one; over pgvector's exact scan in PGlite's WebAssembly, a dozen
 * into one or two. A collection larger than the whole budget is not kept: `search` answers null,
 * and the adapter searches in SQL.
 */
export class CollectionVectors {
  private readonly kept: LRUCache<string, KeptCollection> | null;
  private readonly tooLarge = new LRUCache<string, true>({ max: 1_000, ttl: TOO_LARGE_TTL_MS });

  constructor(
    private readonly db: Queryable,
    private readonly table: string,
    private readonly dimensions: number,
    /** The SQL expression of the embedding to read (pgvector's as text), and of its norm where stored. */
    private readonly embedding: { column: string; norm: string | null },
    megabytes: number,
  ) {
    this.kept =
      megabytes > 0
        ? new LRUCache<string, KeptCollection>({
            maxSize: Math.max(1, Math.floor(megabytes * 1024 * 1024)),
            sizeCalculation: (kept) => kept.bytes,
          })
        : null;
  }

  /** The hits, best first (ties by id); null where nothing may be kept (no budget, too large). */
  async search(query: SearchQuery): Promise<SearchHit[] | null> {
    if (!this.kept) return null;
    let kept = this.kept.get(query.collection);
    if (kept && (await collectionVersion(this.db, this.table, query.collection)) !== kept.version) {
      this.kept.delete(query.collection);
      kept = undefined;
    }
    kept ??= (await this.load(query.collection)) ?? undefined;
    if (!kept) return null;
    return this.rank(kept, query).map(({ row, score }) => {
      const chunk = kept.chunks[row];
      return { chunk: { ...chunk, metadata: { ...chunk.metadata } }, score };
    });
  }

  /** The top K rows by cosine similarity at or above the threshold, ties by id. */
  private rank(kept: KeptCollection, query: SearchQuery): { row: number; score: number }[] {
    const d = this.dimensions;
    const q = query.vector;
    let qNorm = 0;
    for (let i = 0; i < d; i++) qNorm += q[i] * q[i];
    qNorm = Math.sqrt(qNorm);
    const floor = query.threshold ?? -2;
    const { chunks, vectors, norms } = kept;
    const before = (a: { row: number; score: number }, b: { row: number; score: number }) =>
      a.score > b.score || (a.score === b.score && chunks[a.row].id < chunks[b.row].id);
    const top: { row: number; score: number }[] = [];
    for (let row = 0; row < chunks.length; row++) {
      if (!matches(chunks[row].metadata, query.filter)) continue;
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

  /**
   * Reads a collection's chunks with its version (one statement: one snapshot), and keeps them;
   * null when they would not fit in the budget.
   */
  private async load(collection: string): Promise<KeptCollection | null> {
    const budget = this.kept!.maxSize;
    if (this.tooLarge.has(collection)) return null;
    const d = this.dimensions;
    const { rows: counted } = await this.db.query<{ n: number; text: string }>(
      `select count(*)::int as n, coalesce(sum(octet_length(text)), 0)::text as text
         from ${this.table} where collection = $1`,
      [collection],
    );
    if (Number(counted[0].n) * (d * 4 + ROW_BYTES) + 2 * Number(counted[0].text) > budget) {
      this.tooLarge.set(collection, true);
      return null;
    }
    // A collection written before its table had versions gets one, so a TRUNCATE moves it too.
    await this.db.query(
      `insert into ${this.table}_versions (collection, version) values ($1, nextval('${this.table}_versions_seq'))
         on conflict (collection) do nothing`,
      [collection],
    );
    const { rows } = await this.db.query<VectorRow & { version: string }>(
      `select v.version::text as version, c.collection, c.id, c.document_id, c.text, c.tokens, c.metadata,
              c.${this.embedding.column} as embedding${this.embedding.norm ? `, c.${this.embedding.norm} as norm` : ''}
         from (select ${collectionVersionSql(this.table)} as version) v
         left join ${this.table} c on c.collection = $1`,
      [collection],
    );
    const present = rows.filter((r) => r.id !== null);
    const kept: KeptCollection = {
      version: rows[0].version,
      chunks: present.map((r) => toHit({ ...r, score: 0 }).chunk),
      vectors: new Float32Array(present.length * d),
      norms: new Float64Array(present.length),
      bytes: 1,
    };
    kept.bytes = Math.max(
      1,
      kept.vectors.byteLength + present.reduce((sum, r) => sum + ROW_BYTES + 2 * r.text.length, 0),
    );
    // Grown past the budget since it was counted: searched in SQL, and counted again later.
    if (kept.bytes > budget) {
      this.tooLarge.set(collection, true);
      return null;
    }
    present.forEach((r, row) => {
      const values = typeof r.embedding === 'string' ? (JSON.parse(r.embedding) as number[]) : r.embedding;
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

import { randomUUID } from 'node:crypto';
import { DomainError, MEMORY_SCOPES, type MemoryScope } from '@parley/core';
import { norm } from '../validate';
import type { Queryable } from '../vector-store.port';

/** The table of migrations/…-long-term-memory.ts, also created by `init` where it is missing. */
export const MEMORY_TABLE = 'kn_memories';

export const MEMORY_DDL = [
  `create table if not exists ${MEMORY_TABLE} (
     id uuid primary key,
     owner text not null,
     scope text not null,
     scope_id text not null,
     text text not null,
     importance double precision not null,
     expires_at timestamptz,
     embedding bytea not null,
     dimensions integer not null,
     norm double precision not null,
     metadata jsonb not null default '{}',
     created_at timestamptz not null default now(),
     updated_at timestamptz not null default now())`,
  `create unique index if not exists ${MEMORY_TABLE}_fact on ${MEMORY_TABLE} (owner, scope, scope_id, md5(text))`,
  `create index if not exists ${MEMORY_TABLE}_subject on ${MEMORY_TABLE} (owner, scope, scope_id, created_at)`,
  `create index if not exists ${MEMORY_TABLE}_expiry on ${MEMORY_TABLE} (expires_at) where expires_at is not null`,
];

/**
 * How much a scope's facts weigh in a recall: session facts first, then the user's, the agent's,
 * the organisation's. score = similarity × (0.75 + 0.25 × importance) × weight.
 */
export const SCOPE_WEIGHTS: Record<MemoryScope, number> = { session: 1, user: 0.9, agent: 0.8, organisation: 0.7 };

/** The most facts one recall compares with the query: the newest of the asked subjects. */
export const MAX_RECALL_CANDIDATES = 5_000;

/** Expired rows one write deletes at most: the sweep stays bounded however many expired. */
export const SWEEP_BATCH = 100;

export interface Memory {
  id: string;
  owner: string;
  scope: MemoryScope;
  scopeId: string;
  text: string;
  importance: number;
  expiresAt: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryHit {
  memory: Memory;
  /** Cosine similarity of the fact to the query. */
  similarity: number;
  /** What recall ranks by (SCOPE_WEIGHTS). */
  score: number;
}

export interface NewMemory {
  owner: string;
  scope: MemoryScope;
  scopeId: string;
  text: string;
  importance: number;
  expiresAt: Date | null;
  embedding: number[];
  metadata?: Record<string, unknown>;
}

export interface RecallQuery {
  owner: string;
  /** The subjects searched: one id per scope; absent: every subject of the owner (narrowed by `scope`, `scopeId`). */
  scopes?: Partial<Record<MemoryScope, string>>;
  scope?: MemoryScope;
  scopeId?: string;
  vector: number[];
  limit: number;
  /** Lowest cosine similarity a fact needs to be recalled. */
  minSimilarity?: number;
  now?: Date;
}

/** Whose memories a list or a bulk delete covers; `owner` null: every owner's (admins). */
export interface MemorySubject {
  owner: string | null;
  scope?: MemoryScope;
  scopeId?: string;
}

const COLUMNS = 'id, owner, scope, scope_id, text, importance, expires_at, metadata, created_at, updated_at';

interface MemoryRow {
  id: string;
  owner: string;
  scope: MemoryScope;
  scope_id: string;
  text: string;
  importance: number;
  expires_at: Date | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  similarity?: number;
  score?: number;
  updated?: boolean;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

const toMemory = (r: MemoryRow): Memory => ({
  id: r.id,
  owner: r.owner,
  scope: r.scope,
  scopeId: r.scope_id,
  text: r.text,
  importance: Number(r.importance),
  expiresAt: iso(r.expires_at),
  metadata: r.metadata,
  createdAt: iso(r.created_at)!,
  updatedAt: iso(r.updated_at)!,
});

/** An embedding as the column keeps it: float32, little-endian. */
function float32Bytes(vector: readonly number[]): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes;
}

function dot(stored: Uint8Array, vector: readonly number[]): number {
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += view.getFloat32(i * 4, true) * vector[i];
  return sum;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Long-term memory: facts with their embedding, importance and expiry, per owner and per scope
 * (session, user, agent, organisation). Every statement filters by owner in SQL, so one owner's
 * facts never reach another's recall, list or delete. Recall is an exact cosine scan over the
 * owner's facts of the asked scopes (a subject holds few, so no index is needed). Expired
 * facts are never returned, and each write deletes up to SWEEP_BATCH of them.
 */
export class MemoryStore {
  constructor(private readonly db: Queryable) {}

  async init(): Promise<void> {
    for (const statement of MEMORY_DDL) await this.db.query(statement);
  }

  /** Stores a fact; the same text in the same scope is refreshed (importance, expiry, embedding) instead of repeated. */
  async remember(fact: NewMemory, now = new Date()): Promise<{ memory: Memory; updated: boolean }> {
    if (!fact.text.trim()) throw DomainError.validation([{ path: 'text', message: 'must not be empty' }]);
    if (!MEMORY_SCOPES.includes(fact.scope))
      throw DomainError.validation([{ path: 'scope', message: `expected one of ${MEMORY_SCOPES.join(', ')}` }]);
    if (fact.embedding.length === 0 || !fact.embedding.every(Number.isFinite))
      throw DomainError.validation([{ path: 'embedding', message: 'expected a non-empty list of finite numbers' }]);
    await this.sweep(now);
    const { rows } = await this.db.query<MemoryRow>(
      `insert into ${MEMORY_TABLE} (id, owner, scope, scope_id, text, importance, expires_at, embedding, dimensions, norm, metadata, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $12, $9, $10::jsonb, $11, $11)
       on conflict (owner, scope, scope_id, md5(text)) do update set importance = excluded.importance,
         expires_at = excluded.expires_at, embedding = excluded.embedding, dimensions = excluded.dimensions,
         norm = excluded.norm,
         metadata = excluded.metadata, updated_at = excluded.updated_at
       returning ${COLUMNS}, (xmax <> 0) as updated`,
      [
        randomUUID(),
        fact.owner,
        fact.scope,
        fact.scopeId,
        fact.text,
        fact.importance,
        fact.expiresAt,
        float32Bytes(fact.embedding),
        norm(fact.embedding),
        JSON.stringify(fact.metadata ?? {}),
        now,
        fact.embedding.length,
      ],
    );
    return { memory: toMemory(rows[0]), updated: rows[0].updated === true };
  }

  /**
   * The owner's facts of the given scopes closest to the vector, best score first. SQL picks the
   * owner's live facts of the asked subjects (the newest MAX_RECALL_CANDIDATES); their cosine
   * similarity is computed here, over the float32 embeddings, which is some twenty times faster
   * than the same arithmetic on arrays in SQL.
   */
  async recall(query: RecallQuery): Promise<MemoryHit[]> {
    const scopes = query.scopes
      ? (Object.entries(query.scopes).filter(([, id]) => id !== undefined) as [MemoryScope, string][])
      : null;
    const qnorm = norm(query.vector);
    if (scopes?.length === 0 || qnorm === 0) return [];
    const { rows } = await this.db.query<MemoryRow & { embedding: Uint8Array; norm: number }>(
      `select ${COLUMNS}, embedding, norm from ${MEMORY_TABLE}
       where owner = $1
         and ($2::text[] is null or (scope, scope_id) in (select * from unnest($2::text[], $3::text[])))
         and ($4::text is null or scope = $4) and ($5::text is null or scope_id = $5)
         and (expires_at is null or expires_at > $6) and dimensions = $7
       order by created_at desc
       limit $8`,
      [
        query.owner,
        scopes?.map(([s]) => s) ?? null,
        scopes?.map(([, id]) => id) ?? null,
        query.scope ?? null,
        query.scopeId ?? null,
        query.now ?? new Date(),
        query.vector.length,
        MAX_RECALL_CANDIDATES,
      ],
    );
    const floor = query.minSimilarity ?? -Infinity;
    const hits: MemoryHit[] = [];
    for (const row of rows) {
      const similarity = dot(row.embedding, query.vector) / (Number(row.norm) * qnorm || 1);
      if (similarity < floor) continue;
      const importance = Number(row.importance);
      hits.push({
        memory: toMemory(row),
        similarity,
        score: similarity * (0.75 + 0.25 * importance) * SCOPE_WEIGHTS[row.scope],
      });
    }
    return hits
      .sort(
        (a, b) =>
          b.score - a.score ||
          MEMORY_SCOPES.indexOf(a.memory.scope) - MEMORY_SCOPES.indexOf(b.memory.scope) ||
          b.memory.createdAt.localeCompare(a.memory.createdAt) ||
          a.memory.id.localeCompare(b.memory.id),
      )
      .slice(0, query.limit);
  }

  /** A subject's facts not expired, newest first, `limit` at a time; `after` is the last id of the previous page. */
  async list(subject: MemorySubject, page: { limit: number; after?: string }, now = new Date()): Promise<Memory[]> {
    const { where, params } = subjectFilter(subject, now);
    if (page.after !== undefined) {
      params.push(UUID.test(page.after) ? page.after : '00000000-0000-0000-0000-000000000000');
      where.push(`(created_at, id) < (select created_at, id from ${MEMORY_TABLE} where id = $${params.length})`);
    }
    params.push(page.limit);
    const { rows } = await this.db.query<MemoryRow>(
      `select ${COLUMNS} from ${MEMORY_TABLE} where ${where.join(' and ')}
       order by created_at desc, id desc limit $${params.length}`,
      params,
    );
    return rows.map(toMemory);
  }

  /** One fact, if it is the owner's (any owner's when `owner` is null) and not expired. */
  async get(owner: string | null, id: string, now = new Date()): Promise<Memory | null> {
    if (!UUID.test(id)) return null;
    const { where, params } = subjectFilter({ owner }, now);
    params.push(id);
    const { rows } = await this.db.query<MemoryRow>(
      `select ${COLUMNS} from ${MEMORY_TABLE} where ${where.join(' and ')} and id = $${params.length}`,
      params,
    );
    return rows[0] ? toMemory(rows[0]) : null;
  }

  /** Deletes one fact of the owner's; false when there is none of that id (or it is another owner's). */
  async delete(owner: string | null, id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const { rows } = await this.db.query(
      `delete from ${MEMORY_TABLE} where id = $1 and ($2::text is null or owner = $2) returning id`,
      [id, owner],
    );
    return rows.length > 0;
  }

  /** Deletes a subject's facts; returns how many went. */
  async deleteMany(subject: MemorySubject): Promise<number> {
    const { where, params } = subjectFilter(subject, null);
    const { rows } = await this.db.query<{ n: number }>(
      `with gone as (delete from ${MEMORY_TABLE} where ${where.join(' and ')} returning 1) select count(*)::int as n from gone`,
      params,
    );
    return Number(rows[0].n);
  }

  /** Deletes up to `batch` expired facts (oldest expiry first); returns how many. */
  async sweep(now = new Date(), batch = SWEEP_BATCH): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `with gone as (delete from ${MEMORY_TABLE} where id in (
         select id from ${MEMORY_TABLE} where expires_at <= $1 order by expires_at limit $2) returning 1)
       select count(*)::int as n from gone`,
      [now, batch],
    );
    return Number(rows[0].n);
  }
}

function subjectFilter(subject: MemorySubject, now: Date | null): { where: string[]; params: unknown[] } {
  const where: string[] = ['true'];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (subject.owner !== null) add((p) => `owner = ${p}`, subject.owner);
  if (subject.scope !== undefined) add((p) => `scope = ${p}`, subject.scope);
  if (subject.scopeId !== undefined) add((p) => `scope_id = ${p}`, subject.scopeId);
  if (now !== null) add((p) => `(expires_at is null or expires_at > ${p})`, now);
  return { where, params };
}

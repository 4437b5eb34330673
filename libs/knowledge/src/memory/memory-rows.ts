import type { MemoryScope } from '@parley/core';

/* Long-term memory's table, values and the pieces of SQL and arithmetic MemoryStore is built from. */

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

export const COLUMNS = 'id, owner, scope, scope_id, text, importance, expires_at, metadata, created_at, updated_at';

export interface MemoryRow {
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

export const toMemory = (r: MemoryRow): Memory => ({
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
export function float32Bytes(vector: readonly number[]): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes;
}

export function dot(stored: Uint8Array, vector: readonly number[]): number {
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += view.getFloat32(i * 4, true) * vector[i];
  return sum;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function subjectFilter(subject: MemorySubject, now: Date | null): { where: string[]; params: unknown[] } {
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

import { randomUUID } from 'node:crypto';
import { DomainError, MEMORY_SCOPES, type MemoryScope } from '@parley/core';
import { norm } from '../validate';
import type { Queryable } from '../vector-store.port';
import {
  COLUMNS,
  dot,
  float32Bytes,
  MAX_RECALL_CANDIDATES,
  MEMORY_DDL,
  MEMORY_TABLE,
  SCOPE_WEIGHTS,
  subjectFilter,
  SWEEP_BATCH,
  toMemory,
  UUID,
  type Memory,
  type MemoryHit,
  type MemoryRow,
  type MemorySubject,
  type NewMemory,
  type RecallQuery,
} from './memory-rows';

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

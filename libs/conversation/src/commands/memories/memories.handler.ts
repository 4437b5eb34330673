import { Inject, Injectable } from '@nestjs/common';
import { requireRoles, type Principal } from '@parley/auth';
import { DomainError, MEMORY_SCOPES } from '@parley/core';
import { MemoryStore, type Memory, type MemorySubject } from '@parley/knowledge';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { OperationContext } from '../../api/operation';

const subject = {
  scope: z.enum(MEMORY_SCOPES).optional(),
  scopeId: z.string().max(200).optional(),
  /** Shorthand for scope=user&scopeId=<userId>. */
  userId: z.string().min(1).max(200).optional(),
  /** Admins (and auditors, to read): whose memories; a client's are always its own. */
  owner: z.string().min(1).max(200).optional(),
};

/** listMemories (GET /api/v1/memories): a subject's facts, newest first, or the closest to `q`. */
export const listMemoriesQuery = z.strictObject({
  ...subject,
  q: z.string().trim().min(1).max(2000).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.uuid().optional(),
});
export type ListMemoriesQuery = z.output<typeof listMemoriesQuery>;

/** deleteMemories (DELETE /api/v1/memories): a subject's memories, so a scope is required. */
export const deleteMemoriesQuery = z.strictObject(subject);
export type DeleteMemoriesQuery = z.output<typeof deleteMemoriesQuery>;

/** getMemory, deleteMemory: one memory by id (the path's `{id}` over HTTP). */
export const memoryRef = z.strictObject({ memoryId: z.string().min(1).max(200) });
export type MemoryRef = z.output<typeof memoryRef>;

export const deleteMemoriesReply = z.object({
  /** How many memories went. */
  deleted: z.number().int(),
});

/** One memory as the memory operations answer it (without its embedding). */
export const memoryView = (m: Memory) => ({
  id: m.id,
  owner: m.owner,
  scope: m.scope,
  scopeId: m.scopeId,
  text: m.text,
  importance: m.importance,
  expiresAt: m.expiresAt,
  metadata: m.metadata,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
});

const isPrivileged = (p: Principal) => p.roles.includes('admin') || p.roles.includes('auditor');

/**
 * The owner a caller's request covers: a client's own subject; an admin's or auditor's choice
 * (null: every owner). A client that names another owner is FORBIDDEN.
 */
export function memoryOwnerOf(principal: Principal, named: string | undefined): string | null {
  if (isPrivileged(principal)) return named ?? null;
  if (named !== undefined && named !== principal.subject)
    throw new DomainError('FORBIDDEN', "Only admins and auditors may name another owner's memories.");
  return principal.subject;
}

/** The memories a list or bulk delete covers: the caller's owner, and the subject its filters name. */
export function memorySubjectOf(principal: Principal, q: DeleteMemoriesQuery): MemorySubject {
  if (q.userId !== undefined && ((q.scope ?? 'user') !== 'user' || q.scopeId !== undefined))
    throw DomainError.validation([
      { path: 'userId', message: 'userId stands for scope=user&scopeId: give one or the other' },
    ]);
  const scope = q.userId !== undefined ? 'user' : q.scope;
  const scopeId = q.userId ?? (scope === 'organisation' ? (q.scopeId ?? '') : q.scopeId);
  return {
    owner: memoryOwnerOf(principal, q.owner),
    ...(scope ? { scope } : {}),
    ...(scopeId !== undefined ? { scopeId } : {}),
  };
}

/**
 * Runs `work` on the memory store; answers `none` where the store's table was never created
 * (nothing was ever remembered), so there is nothing to delete.
 */
export async function withMemoryStore<T>(pool: Pool, work: (store: MemoryStore) => Promise<T>, none: T): Promise<T> {
  try {
    return await work(new MemoryStore(pool));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return none;
    throw err;
  }
}

/**
 * deleteMemory: one long-term memory of the caller (docs/knowledge.md#long-term-memory). A
 * client deletes only a memory its own conversations stored (another owner's is NOT_FOUND, as an
 * unknown id is); an admin any. Answers null (HTTP: 204).
 */
@Injectable()
export class DeleteMemoryHandler {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(input: MemoryRef, ctx: OperationContext): Promise<null> {
    requireRoles(ctx.caller, ['client', 'admin']);
    const owner = memoryOwnerOf(ctx.caller, undefined);
    const gone = await withMemoryStore(this.pool, (store) => store.delete(owner, input.memoryId), false);
    if (!gone) throw DomainError.notFound('Memory', input.memoryId);
    return null;
  }
}

/**
 * deleteMemories: a subject's long-term memories, e.g. `scope=user&scopeId=u1` (or `userId=u1`);
 * answers how many went. A client covers its own; an admin may name an `owner`, or none for every
 * owner's.
 */
@Injectable()
export class DeleteMemoriesHandler {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(input: DeleteMemoriesQuery, ctx: OperationContext): Promise<z.output<typeof deleteMemoriesReply>> {
    requireRoles(ctx.caller, ['client', 'admin']);
    const filter = memorySubjectOf(ctx.caller, input);
    if (filter.scope === undefined)
      throw DomainError.validation([{ path: 'scope', message: 'required: the scope whose memories to delete' }]);
    if (filter.scope !== 'organisation' && filter.scopeId === undefined)
      throw DomainError.validation([{ path: 'scopeId', message: `required for the ${filter.scope} scope` }]);
    return { deleted: await withMemoryStore(this.pool, (store) => store.deleteMany(filter), 0) };
  }
}

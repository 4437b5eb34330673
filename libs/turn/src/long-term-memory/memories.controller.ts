import { Controller, Delete, Get, HttpCode, Inject, Param, Query } from '@nestjs/common';
import { CurrentPrincipal, Roles, type Principal } from '@parley/auth';
import { SnapshotResolver } from '@parley/catalog';
import { DomainError, MEMORY_SCOPES } from '@parley/core';
import type { Memory, MemorySubject } from '@parley/knowledge';
import { parseOrThrow } from '@parley/platform';
import { z } from 'zod';
import { LongTermMemory } from './long-term-memory';

const subject = {
  scope: z.enum(MEMORY_SCOPES).optional(),
  scopeId: z.string().max(200).optional(),
  /** Shorthand for scope=user&scopeId=<userId>. */
  userId: z.string().min(1).max(200).optional(),
  /** Admins (and auditors, to read): whose memories; a client's are always its own. */
  owner: z.string().min(1).max(200).optional(),
};

/** The query of GET /api/v1/memories (also what the OpenAPI document describes). */
export const listMemoriesQuery = z.strictObject({
  ...subject,
  q: z.string().trim().min(1).max(2000).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.uuid().optional(),
});

/** The query of DELETE /api/v1/memories: a subject's memories, so a scope is required. */
export const deleteMemoriesQuery = z.strictObject(subject);

const isPrivileged = (p: Principal) => p.roles.includes('admin') || p.roles.includes('auditor');

/**
 * A subject's long-term memories (docs/knowledge.md#long-term-memory): listed, searched and
 * deleted. A client sees and deletes only the memories its own conversations stored (their
 * owner); an admin may name any `owner`, or none to cover every owner's.
 */
@Controller('api/v1/memories')
@Roles('client', 'admin', 'auditor')
export class MemoriesController {
  constructor(
    @Inject(LongTermMemory) private readonly memory: LongTermMemory,
    @Inject(SnapshotResolver) private readonly catalog: SnapshotResolver,
  ) {}

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() query: unknown) {
    const q = parseOrThrow(listMemoriesQuery, query ?? {});
    const filter = subjectOf(principal, q);
    if (q.q !== undefined) {
      if (filter.owner === null)
        throw DomainError.validation([{ path: 'owner', message: 'a search (q) covers one owner: name it' }]);
      const model = await this.catalog.memoryEmbedding();
      const { owner, scope, scopeId } = filter;
      const { hits } = await this.memory.search(model, q.q, q.limit, { owner, scope, scopeId });
      return {
        items: hits.map((h) => ({ ...view(h.memory), similarity: h.similarity, score: h.score })),
        nextCursor: null,
      };
    }
    const items = await this.memory.use((store) =>
      store.list(filter, { limit: q.limit + 1, ...(q.cursor ? { after: q.cursor } : {}) }),
    );
    const page = items.slice(0, q.limit);
    return { items: page.map(view), nextCursor: items.length > q.limit ? page[page.length - 1].id : null };
  }

  @Get(':id')
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    const found = await this.memory.use((store) => store.get(ownerOf(principal, undefined), id));
    if (!found) throw DomainError.notFound('Memory', id);
    return view(found);
  }

  @Delete(':id')
  @Roles('client', 'admin')
  @HttpCode(204)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    const gone = await this.memory.use((store) => store.delete(ownerOf(principal, undefined), id));
    if (!gone) throw DomainError.notFound('Memory', id);
  }

  /** A subject's memories, e.g. `?scope=user&scopeId=u1` (or `?userId=u1`): answers how many went. */
  @Delete()
  @Roles('client', 'admin')
  @HttpCode(200)
  async removeAll(@CurrentPrincipal() principal: Principal, @Query() query: unknown) {
    const filter = subjectOf(principal, parseOrThrow(deleteMemoriesQuery, query ?? {}));
    if (filter.scope === undefined)
      throw DomainError.validation([{ path: 'scope', message: 'required: the scope whose memories to delete' }]);
    if (filter.scope !== 'organisation' && filter.scopeId === undefined)
      throw DomainError.validation([{ path: 'scopeId', message: `required for the ${filter.scope} scope` }]);
    return { deleted: await this.memory.use((store) => store.deleteMany(filter)) };
  }
}

/** The owner a caller's request covers: a client's own subject; an admin's or auditor's choice (null: all). */
function ownerOf(principal: Principal, named: string | undefined): string | null {
  if (isPrivileged(principal)) return named ?? null;
  if (named !== undefined && named !== principal.subject)
    throw new DomainError('FORBIDDEN', "Only admins and auditors may name another owner's memories.");
  return principal.subject;
}

function subjectOf(principal: Principal, q: z.output<typeof deleteMemoriesQuery>): MemorySubject {
  if (q.userId !== undefined && ((q.scope ?? 'user') !== 'user' || q.scopeId !== undefined))
    throw DomainError.validation([
      { path: 'userId', message: 'userId stands for scope=user&scopeId: give one or the other' },
    ]);
  const scope = q.userId !== undefined ? 'user' : q.scope;
  const scopeId = q.userId ?? (scope === 'organisation' ? (q.scopeId ?? '') : q.scopeId);
  return {
    owner: ownerOf(principal, q.owner),
    ...(scope ? { scope } : {}),
    ...(scopeId !== undefined ? { scopeId } : {}),
  };
}

const view = (m: Memory) => ({
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

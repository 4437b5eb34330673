import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@parley/auth';
import { SnapshotResolver } from '@parley/catalog';
import { DomainError } from '@parley/core';
import {
  memoryOwnerOf,
  memorySubjectOf,
  memoryView,
  type ListMemoriesQuery,
  type MemoryRef,
} from '@parley/conversation';
import { LongTermMemory } from './long-term-memory';

/**
 * The long-term memory queries of the query table (docs/knowledge.md#long-term-memory): a
 * subject's memories listed or searched, and one by id. A client sees only the memories its own
 * conversations stored (their owner); admins and auditors may name any `owner`, or none to cover
 * every owner's (a search, which embeds its query, covers one owner).
 */
@Injectable()
export class MemoryQueries {
  constructor(
    @Inject(LongTermMemory) private readonly memory: LongTermMemory,
    @Inject(SnapshotResolver) private readonly catalog: SnapshotResolver,
  ) {}

  async list(caller: Principal, q: ListMemoriesQuery) {
    const filter = memorySubjectOf(caller, q);
    if (q.q !== undefined) {
      if (filter.owner === null)
        throw DomainError.validation([{ path: 'owner', message: 'a search (q) covers one owner: name it' }]);
      const model = await this.catalog.memoryEmbedding();
      const { owner, scope, scopeId } = filter;
      const { hits } = await this.memory.search(model, q.q, q.limit, { owner, scope, scopeId });
      return {
        items: hits.map((h) => ({ ...memoryView(h.memory), similarity: h.similarity, score: h.score })),
        nextCursor: null,
      };
    }
    const items = await this.memory.use((store) =>
      store.list(filter, { limit: q.limit + 1, ...(q.cursor ? { after: q.cursor } : {}) }),
    );
    const page = items.slice(0, q.limit);
    return { items: page.map(memoryView), nextCursor: items.length > q.limit ? page[page.length - 1].id : null };
  }

  /** The memory, or null (NOT_FOUND over HTTP) when there is none of that id the caller may see. */
  async get(caller: Principal, { memoryId }: MemoryRef) {
    const found = await this.memory.use((store) => store.get(memoryOwnerOf(caller, undefined), memoryId));
    return found ? memoryView(found) : null;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { LongTermMemorySettings, MemoryScope } from '@parley/core';
import type { EmbeddingUsage, MemoryScopes, RememberRequest } from '@parley/domain';
import { MemoryStore, type Memory, type MemoryHit } from '@parley/knowledge';
import { EmbeddingClient, PROVIDER_ENDPOINTS, type ProviderEndpoints } from '@parley/llm';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';

const DAY_MS = 86_400_000;

type EmbeddingModel = LongTermMemorySettings['embedding'];

/**
 * Long-term memory as the turn and the routes use it: texts embedded with the embedding model
 * through the EmbeddingClient, facts kept in the MemoryStore (Parley's own database), default
 * lifetimes and the similarity floor from the config.
 */
@Injectable()
export class LongTermMemory {
  readonly store: MemoryStore;
  private ready: Promise<void> | null = null;

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(EmbeddingClient) private readonly embeddings: EmbeddingClient,
    @Inject(PROVIDER_ENDPOINTS) private readonly endpoints: ProviderEndpoints,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.store = new MemoryStore(pool);
  }

  /** The table is the migration's; `init` covers a database migrated before it (idempotent, once). */
  private async opened(): Promise<MemoryStore> {
    this.ready ??= this.store.init().catch((err: unknown) => {
      this.ready = null;
      throw err;
    });
    await this.ready;
    return this.store;
  }

  /** The text's vector, and what the embedding call cost (the model's catalog code, tokens, cost). */
  async embed(
    model: EmbeddingModel,
    text: string,
    signal?: AbortSignal,
  ): Promise<{ vector: number[]; embedding: EmbeddingUsage }> {
    const provider = await this.endpoints.endpointFor(model.providerCode);
    const result = await this.embeddings.embed(
      { provider, model: model.name, inputs: [text], inputTokenPrice: model.inputTokenPrice },
      signal,
    );
    return { vector: result.vectors[0], embedding: { model: model.code, tokens: result.tokens, cost: result.cost } };
  }

  /** When a fact ends: its own expiry, else its ttlDays, else the scope's default. */
  expiryOf(request: Pick<RememberRequest, 'scope' | 'ttlDays' | 'expiresAt'>, now: number): Date {
    if (request.expiresAt) return new Date(request.expiresAt);
    const days =
      request.ttlDays ?? (request.scope === 'session' ? this.config.memory.sessionTtlDays : this.config.memory.ttlDays);
    return new Date(now + days * DAY_MS);
  }

  async remember(
    model: EmbeddingModel,
    request: RememberRequest,
    metadata: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ memory: Memory; updated: boolean; embedding: EmbeddingUsage }> {
    const { vector, embedding } = await this.embed(model, request.text, signal);
    const store = await this.opened();
    const now = Date.now();
    const stored = await store.remember(
      {
        owner: request.owner,
        scope: request.scope,
        scopeId: request.scopeId,
        text: request.text,
        importance: request.importance,
        expiresAt: this.expiryOf(request, now),
        embedding: vector,
        metadata,
      },
      new Date(now),
    );
    return { ...stored, embedding };
  }

  /** The facts of every scope of the conversation closest to `query`, best score first. */
  recall(model: EmbeddingModel, query: string, limit: number, scopes: MemoryScopes, signal?: AbortSignal) {
    return this.search(model, query, limit, { owner: scopes.owner, scopes: scopes.ids }, signal);
  }

  /**
   * The owner's facts closest to `query`: of the named subjects, or of any (narrowed by scope,
   * scope id), with what embedding the query cost.
   */
  async search(
    model: EmbeddingModel,
    query: string,
    limit: number,
    where: { owner: string; scopes?: Partial<Record<MemoryScope, string>>; scope?: MemoryScope; scopeId?: string },
    signal?: AbortSignal,
  ): Promise<{ hits: MemoryHit[]; embedding: EmbeddingUsage }> {
    const { vector, embedding } = await this.embed(model, query, signal);
    const store = await this.opened();
    const hits = await store.recall({ ...where, vector, limit, minSimilarity: this.config.memory.minSimilarity });
    return { hits, embedding };
  }

  async use<T>(work: (store: MemoryStore) => Promise<T>): Promise<T> {
    return work(await this.opened());
  }
}

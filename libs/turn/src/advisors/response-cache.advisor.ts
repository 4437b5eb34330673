import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import {
  ParleyAdvisor,
  type AdvisedReply,
  type Advisor,
  type AdvisorContext,
  type AdvisorOutcome,
  type LlmRequest,
} from '@parley/llm';
import { REDIS, type Redis } from '@parley/platform';
import { sha256Of } from './stable-json';

const KEY = 'responseCache.key';
const logger = new Logger('ResponseCacheAdvisor');

/** The cache key of a request: sha-256 of what the model is sent (provider, model, messages, tools, options; never the key). */
export function cacheKeyOf(request: LlmRequest): string {
  const { provider, model, messages, tools, options } = request;
  const what = { provider: provider.code, baseUrl: provider.baseUrl, model, messages, tools, options };
  return sha256Of(what);
}

/** A bounded least-recently-used map whose entries expire. */
class LruCache {
  private readonly entries = new Map<string, { value: string; expiresAt: number }>();

  constructor(private readonly max: number) {}

  get(key: string): string | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.expiresAt <= Date.now()) return null;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: Date.now() + ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

/**
 * `responseCache`: an exact-match cache from the model request to its reply, in Redis when
 * REDIS_URL is set (keys `<PARLEY_PREFIX>:advisor-cache:<sha-256>`), else a bounded in-memory LRU (ADVISOR_CACHE_MAX_ENTRIES). A hit answers
 * without calling the model. Only replies that end the turn normally (finish ST, no tool
 * calls) are kept, for ADVISOR_CACHE_TTL_MS or the advisor config's `ttlMs`. A cache that cannot
 * be reached is a miss, never a failed turn.
 */
@ParleyAdvisor({ name: 'responseCache', description: 'Answers an identical model request from a cache.' })
@Injectable()
export class ResponseCacheAdvisor implements Advisor {
  private readonly memory: LruCache;
  private readonly prefix: string;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(REDIS) private readonly redis: Redis | null = null,
  ) {
    this.memory = new LruCache(config.llm.advisorCacheMaxEntries);
    this.prefix = `${config.prefix}:advisor-cache:`;
  }

  async before(request: LlmRequest, ctx: AdvisorContext): Promise<AdvisorOutcome | void> {
    const key = cacheKeyOf(request);
    ctx.attributes.set(KEY, key);
    const found = await this.read(key);
    if (!found) return;
    const reply = JSON.parse(found) as AdvisedReply;
    return { reply: { ...reply, latencyMs: 0 }, note: { cache: 'hit', key } };
  }

  async after(reply: AdvisedReply, ctx: AdvisorContext): Promise<AdvisorOutcome | void> {
    const key = ctx.attributes.get(KEY);
    if (typeof key !== 'string' || reply.finishReason !== 'ST' || reply.toolCalls.length > 0) return;
    const ttl = typeof ctx.config.ttlMs === 'number' && ctx.config.ttlMs > 0 ? ctx.config.ttlMs : null;
    await this.write(key, JSON.stringify(reply), ttl ?? this.config.llm.advisorCacheTtlMs);
  }

  private async read(key: string): Promise<string | null> {
    if (!this.redis) return this.memory.get(key);
    return this.redis.get(this.prefix + key).catch((err: Error) => {
      logger.warn(`response cache unreachable, calling the model: ${err.message}`);
      return null;
    });
  }

  private async write(key: string, value: string, ttlMs: number): Promise<void> {
    if (!this.redis) return this.memory.set(key, value, ttlMs);
    await this.redis.set(this.prefix + key, value, 'PX', Math.ceil(ttlMs)).catch((err: Error) => {
      logger.warn(`response cache unreachable, reply not kept: ${err.message}`);
    });
  }
}

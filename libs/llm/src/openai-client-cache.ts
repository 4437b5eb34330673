import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import OpenAI from 'openai';
import type { ProviderEndpoint } from './llm.port';
import { undiciFetch } from './undici-fetch';

/** SDK clients kept at most; they share one agent, so one dropped holds no connection. */
export const MAX_CLIENTS = 100;

const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);

/**
 * One SDK client per provider endpoint, reused across calls (keeps its connection pool).
 * Keyed by code, base URL and a hash of the key and headers, so a rotated key gets a new
 * client and no secret sits in a map key. All of them send through one undici keep-alive agent.
 */
export class OpenAiClientCache {
  /** A rotated key leaves its old client behind: the least recently used go past MAX_CLIENTS. */
  private readonly clients = new LRUCache<string, OpenAI>({ max: MAX_CLIENTS });
  /**
   * The client of an endpoint object already seen: the catalog hands out the same object for a
   * while (CALL_TIME_TTL_MS), so most calls skip the two hashes of the key.
   */
  private readonly byEndpoint = new WeakMap<ProviderEndpoint, OpenAI>();

  /** How many clients are kept (at most MAX_CLIENTS). */
  get size(): number {
    return this.clients.size;
  }
  private readonly fetch = undiciFetch();

  get(provider: ProviderEndpoint): OpenAI {
    const known = this.byEndpoint.get(provider);
    if (known) return known;
    const key = [
      provider.code,
      provider.baseUrl,
      digest(provider.apiKey ?? ''),
      digest(JSON.stringify(provider.headers ?? {})),
    ].join('|');
    let client = this.clients.get(key);
    if (!client) {
      client = new OpenAI({
        baseURL: provider.baseUrl,
        // Local servers take no key: the SDK insists on one, so a placeholder goes in and its header comes out.
        apiKey: provider.apiKey ?? 'none',
        adminAPIKey: null,
        organization: null,
        project: null,
        webhookSecret: null,
        // Retries are Parley's own, so every attempt can be recorded as an event.
        maxRetries: 0,
        fetch: this.fetch,
        defaultHeaders: { ...provider.headers, ...(provider.apiKey === null ? { Authorization: null } : {}) },
      });
      this.clients.set(key, client);
    }
    this.byEndpoint.set(provider, client);
    return client;
  }
}

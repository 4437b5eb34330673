import type { ProviderEndpoint, ProviderEndpoints } from '@parley/llm';

const TTL_MS = 5_000;

/**
 * Remembers a provider's endpoint for a few seconds, so a busy worker does not read and decrypt
 * the provider row on every model call; a changed key or URL is picked up within TTL_MS.
 */
export class CachedProviderEndpoints implements ProviderEndpoints {
  private readonly cache = new Map<string, { at: number; endpoint: Promise<ProviderEndpoint> }>();

  constructor(
    private readonly source: ProviderEndpoints,
    private readonly now: () => number = Date.now,
  ) {}

  endpointFor(providerCode: string): Promise<ProviderEndpoint> {
    const hit = this.cache.get(providerCode);
    if (hit && this.now() - hit.at < TTL_MS) return hit.endpoint;
    const endpoint = this.source.endpointFor(providerCode);
    this.cache.set(providerCode, { at: this.now(), endpoint });
    endpoint.catch(() => this.cache.delete(providerCode));
    return endpoint;
  }
}

import type { ProviderEndpoint } from '@parley/llm';
import { CachedProviderEndpoints } from './cached-endpoints';

describe('CachedProviderEndpoints', () => {
  const endpoint = (key: string): ProviderEndpoint => ({ code: 'P', baseUrl: 'http://x/v1', apiKey: key });

  it('reads a provider once within the TTL and again after it', async () => {
    let clock = 0;
    let reads = 0;
    const cached = new CachedProviderEndpoints({ endpointFor: async () => endpoint(`k${++reads}`) }, () => clock);
    expect((await cached.endpointFor('P')).apiKey).toBe('k1');
    clock = 4_999;
    expect((await cached.endpointFor('P')).apiKey).toBe('k1');
    clock = 5_000;
    expect((await cached.endpointFor('P')).apiKey).toBe('k2');
  });

  it('does not remember a failed lookup', async () => {
    let calls = 0;
    const cached = new CachedProviderEndpoints({
      endpointFor: async () => {
        if (++calls === 1) throw new Error('missing');
        return endpoint('ok');
      },
    });
    await expect(cached.endpointFor('P')).rejects.toThrow('missing');
    expect((await cached.endpointFor('P')).apiKey).toBe('ok');
  });
});

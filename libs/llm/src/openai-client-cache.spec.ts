import { MAX_CLIENTS, OpenAiClientCache } from './openai-client-cache';

describe('OpenAiClientCache', () => {
  const provider = (key: string) => ({ code: 'SIM', baseUrl: 'http://127.0.0.1:1/v1', apiKey: key });

  it('reuses one client per endpoint and key', () => {
    const cache = new OpenAiClientCache();
    expect(cache.get(provider('sk-1'))).toBe(cache.get(provider('sk-1')));
    expect(cache.get(provider('sk-2'))).not.toBe(cache.get(provider('sk-1')));
  });

  it('keeps at most MAX_CLIENTS clients however often keys rotate, the least recently used out first', () => {
    const cache = new OpenAiClientCache();
    const current = cache.get(provider('sk-current'));
    for (let i = 0; i < MAX_CLIENTS * 2; i++) {
      cache.get(provider(`sk-rotated-${i}`));
      cache.get(provider('sk-current'));
    }
    expect(cache.size).toBe(MAX_CLIENTS);
    expect(cache.get(provider('sk-current'))).toBe(current);
  });
});

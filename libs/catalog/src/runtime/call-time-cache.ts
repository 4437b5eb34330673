import { LRUCache } from 'lru-cache';

/** How long a looked-up provider or tool config is reused: a changed key or URL is picked up within this. */
export const CALL_TIME_TTL_MS = 5_000;

/**
 * Remembers what `load` returned for a code for `ttlMs`, so a busy worker does not read and
 * decrypt the same catalog row on every model or tool call. Concurrent lookups of one code share
 * a single load; a failed load is not remembered.
 */
export function callTimeCache<V extends object>(
  load: (code: string) => Promise<V>,
  options: { ttlMs?: number; now?: () => number } = {},
): (code: string) => Promise<V> {
  const cache = new LRUCache<string, V>({
    max: 1_000,
    ttl: options.ttlMs ?? CALL_TIME_TTL_MS,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    fetchMethod: (code) => load(code),
  });
  return async (code) => (await cache.fetch(code)) as V;
}

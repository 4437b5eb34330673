import { Redis } from 'ioredis';

/**
 * One ioredis connection with the settings every Parley use needs: commands fail fast while
 * Redis is down (rate limits and readiness must answer, not queue for ever), reconnects go on in
 * the background so the service recovers by itself when Redis returns, and the commands of one
 * tick are pipelined.
 */
function createRedis(url: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Commands sent in the same tick (many conversations' rate limits, turn slots and caches
    // under load) go to Redis in one write.
    enableAutoPipelining: true,
  });
  // Without a listener a lost connection is an unhandled 'error' event that ends the process.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Waits (bounded) for the first connection, because without the offline queue a command sent
 * before it fails. A Redis that is down at boot does not stop the boot: readiness reports it.
 */
export async function connectedRedis(url: string, waitMs = 3_000): Promise<Redis> {
  const redis = createRedis(url);
  if (redis.status === 'ready') return redis;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, waitMs);
    redis.once('ready', done);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
  });
  return redis;
}

export type { Redis };

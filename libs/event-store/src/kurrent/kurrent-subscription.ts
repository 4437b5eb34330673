import { START, type KurrentDBClient } from '@kurrent/kurrentdb-client';
import type { SubscribeOptions, SubscriptionItem } from '../event-store.port';
import {
  decodePosition,
  encodePosition,
  fromEsdbEvent,
  matches,
  toServerFilter,
  translateKurrentError,
} from './kurrent-mapping';

const HIGH_WATER = 1000;

/**
 * A filtered catch-up subscription to $all as an async iterator: events as they come, and the
 * server's caughtUp signal (KurrentDB 23.10+). Buffers at most ~HIGH_WATER items, pausing the
 * gRPC stream beyond that.
 */
export async function* subscribeKurrent(
  client: KurrentDBClient,
  options: SubscribeOptions,
): AsyncGenerator<SubscriptionItem> {
  const { fromPosition, filter, signal } = options;
  const subscription = client.subscribeToAll({
    fromPosition: fromPosition ? decodePosition(fromPosition) : START,
    filter: toServerFilter(filter),
  });
  const queue: SubscriptionItem[] = [];
  let failure: unknown = null;
  let ended = false;
  let last: string | null = fromPosition ?? null;
  let wake: (() => void) | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };
  subscription.on('data', (resolved) => {
    if (!resolved.event) return;
    const event = fromEsdbEvent(resolved.event, resolved.event.position);
    if (event.position === fromPosition || !matches(filter, event)) return;
    last = event.position;
    queue.push({ kind: 'event', event });
    if (queue.length >= HIGH_WATER) subscription.pause();
    poke();
  });
  subscription.on('caughtUp', (info) => {
    queue.push({ kind: 'caughtUp', position: info.position ? encodePosition(info.position) : last });
    poke();
  });
  subscription.on('error', (err) => {
    failure = err;
    poke();
  });
  subscription.on('end', () => {
    ended = true;
    poke();
  });
  const stop = () => {
    ended = true;
    poke();
  };
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const item = queue.shift();
      if (item) {
        if (queue.length < HIGH_WATER / 2 && subscription.isPaused()) subscription.resume();
        yield item;
        continue;
      }
      if (failure) throw translateKurrentError(failure, '$all');
      if (ended || signal?.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    await subscription.unsubscribe().catch(() => undefined);
  }
}

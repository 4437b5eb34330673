import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { EventStore, EventToAppend, RecordedEvent, SubscribeOptions, SubscriptionItem } from '../event-store.port';

/** An append left uncommitted, to commit or roll back later (out-of-order commit tests). */
export interface OpenAppend {
  position: string;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** What the contract suite needs from an adapter under test. */
export interface ContractHarness {
  store: EventStore;
  /** PostgreSQL for subscription checkpoints and the test read models. */
  pool: Pool;
  /** The size limit the store was built with. */
  maxEventBytes: number;
  /** A new adapter over the same storage, as after a process restart. The suite closes it. */
  reopen(): Promise<EventStore>;
  /** Appends in a transaction left open; absent where the store commits in position order. */
  holdOpenAppend?(streamId: string, events: EventToAppend[]): Promise<OpenAppend>;
  /** Rewrites a stored event's data behind the store's back; absent where storage is immutable. */
  tamper?(streamId: string, revision: bigint): Promise<void>;
  close(): Promise<void>;
}

/** A category no other test uses, so global-feed assertions see only their own events. */
export const newCategory = (): string => `c${randomBytes(5).toString('hex')}`;

export const newStream = (category = newCategory()): string => `${category}-${randomUUID()}`;

export const event = (
  type = 'Tested',
  data: unknown = { n: 1 },
  metadata?: Record<string, unknown>,
): EventToAppend => ({
  eventId: randomUUID(),
  type,
  data,
  ...(metadata ? { metadata } : {}),
});

export const events = (count: number, type = 'Tested'): EventToAppend[] =>
  Array.from({ length: count }, (_, n) => event(type, { n }));

/** Retries `check` until it stops throwing: the global feed shows a commit once older transactions end. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Reads a category's part of the global feed, all of it. */
export const readCategory = (store: EventStore, category: string, fromPosition?: string): Promise<RecordedEvent[]> =>
  store.readAll({ filter: { categories: [category] }, fromPosition });

/** Subscribes and collects items until `until` says stop; fails after `timeoutMs`. Always unsubscribes. */
export async function collect(
  store: EventStore,
  options: Omit<SubscribeOptions, 'signal'>,
  until: (seen: SubscriptionItem[]) => boolean,
  timeoutMs = 15_000,
): Promise<SubscriptionItem[]> {
  const seen: SubscriptionItem[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    for await (const item of store.subscribeToAll({ ...options, signal: controller.signal })) {
      seen.push(item);
      if (until(seen)) return seen;
    }
    throw new Error(`subscription ended after ${seen.length} items without meeting its condition`);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

export const eventIdsOf = (items: SubscriptionItem[]): string[] =>
  items.flatMap((item) => (item.kind === 'event' ? [item.event.eventId] : []));

export async function caught<T = unknown>(promise: Promise<unknown>): Promise<T> {
  try {
    await promise;
  } catch (err) {
    return err as T;
  }
  throw new Error('expected the call to fail, it succeeded');
}

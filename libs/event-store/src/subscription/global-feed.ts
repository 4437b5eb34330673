import type { EventFilter, RecordedEvent } from '../event-store.port';

/** One page of the global feed, read by the ordering rule. */
export interface FeedPage {
  events: RecordedEvent[];
  /**
   * How far the read looked: every event at or before this position that matches the filter
   * is in this page or an earlier one. Ahead of the last event when the page was short and the
   * feed held later events that did not match; null on an empty store.
   */
  scannedTo: string | null;
}

/**
 * What catch-up subscriptions and the subscription runner need from an adapter, beyond the
 * port: paged reads of the global feed and a way to sleep until something may have changed.
 */
export interface GlobalFeed {
  readPage(after: string | null, filter: EventFilter | undefined, maxCount: number): Promise<FeedPage>;
  /** Resolves after an append by this process, after `timeoutMs`, or on abort; never rejects. */
  waitForAppend(timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

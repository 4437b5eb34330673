import type { EventFilter, GlobalFeed, SubscriptionItem } from '../event-store.port';
import { comparePositions } from '../position';

export interface CatchUpOptions {
  fromPosition?: string;
  filter?: EventFilter;
  signal?: AbortSignal;
  pageSize: number;
  pollMs: number;
  /** Ends the iteration when it returns true (the store was closed). */
  isClosed: () => boolean;
}

/**
 * A catch-up subscription over any GlobalFeed: history page by page, one `caughtUp` item the
 * first time a page comes back short, then live events as appends wake it or polls find them.
 * Resume is exclusive of `fromPosition`. Ends quietly on abort, on close, or when the consumer
 * stops iterating.
 */
export async function* catchUp(feed: GlobalFeed, options: CatchUpOptions): AsyncGenerator<SubscriptionItem> {
  const { signal, filter, pageSize, pollMs } = options;
  let after: string | null = options.fromPosition ?? null;
  let caughtUp = false;
  while (!signal?.aborted && !options.isClosed()) {
    const mark = feed.appendMark();
    const page = await feed.readPage(after, filter, pageSize);
    for (const event of page.events) {
      if (signal?.aborted) return;
      after = event.position;
      yield { kind: 'event', event };
    }
    if (page.events.length < pageSize) {
      if (page.scannedTo && (after === null || comparePositions(page.scannedTo, after) > 0)) after = page.scannedTo;
      if (!caughtUp) {
        caughtUp = true;
        yield { kind: 'caughtUp', position: after };
      }
      await feed.waitForAppend(pollMs, signal, mark);
    }
  }
}

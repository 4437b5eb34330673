import type { EventFilter, GlobalFeed, SubscriptionItem } from '../event-store.port';
import { comparePositions } from '../position';
import { AWAITED, HiddenAppends, sleep } from './hidden-appends';

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
 * An append of this process that the read after its wake-up does not show (another database's
 * transaction holds the feed's horizon) is read for again, past it, within milliseconds
 * (HiddenAppends), as a subscription runner does. Resume is exclusive of `fromPosition`. Ends
 * quietly on abort, on close, or when the consumer stops iterating.
 */
export async function* catchUp(feed: GlobalFeed, options: CatchUpOptions): AsyncGenerator<SubscriptionItem> {
  const { signal, filter, pageSize, pollMs } = options;
  const stopped = signal ?? new AbortController().signal;
  let after: string | null = options.fromPosition ?? null;
  let caughtUp = false;
  const hidden = new HiddenAppends(pollMs);
  while (!signal?.aborted && !options.isClosed()) {
    const mark = feed.appendMark();
    const from = after;
    const page = await feed.readPage(after, filter, pageSize, hidden.pending ? AWAITED : undefined);
    for (const event of page.events) {
      if (signal?.aborted) return;
      after = event.position;
      yield { kind: 'event', event };
    }
    const short = page.events.length < pageSize;
    if (short && page.scannedTo && (after === null || comparePositions(page.scannedTo, after) > 0))
      after = page.scannedTo;
    hidden.read(after !== from);
    if (!short) continue;
    if (!caughtUp) {
      caughtUp = true;
      yield { kind: 'caughtUp', position: after };
    }
    if (hidden.pending) {
      await sleep(hidden.nextRetryMs(), stopped);
      continue;
    }
    await feed.waitForAppend(pollMs, signal, mark);
    if (feed.appendMark() !== mark) hidden.appended();
  }
}

import type { ReadPageOptions } from '../event-store.port';

/** The read a reader of the feed makes while an append of its process has not shown yet. */
export const AWAITED: ReadPageOptions = { appendAwaited: true };

/**
 * An append of this process that the next read did not show: the feed's horizon hides it until
 * every transaction that began before it has ended, and one of them (any database's on the
 * cluster) is still running. Rather than wait for the next append or poll, the reader (a
 * subscription runner, a catch-up subscription) reads again, past other databases'
 * transactions, after 5 ms, 10, 20… (at most 100 ms apart) until it shows, or for one poll
 * interval in all, after which the poll takes over.
 */
export class HiddenAppends {
  pending = false;
  private retryMs = 0;
  private waitedMs = 0;

  constructor(private readonly pollMs: number) {}

  appended(): void {
    this.pending = true;
  }

  /** After a read: `moved`, the reader got past its position (the append showed). */
  read(moved: boolean): void {
    if (moved || this.waitedMs >= this.pollMs) {
      this.pending = false;
      this.retryMs = 0;
      this.waitedMs = 0;
    }
  }

  nextRetryMs(): number {
    this.retryMs = Math.min(100, Math.max(5, this.retryMs * 2));
    this.waitedMs += this.retryMs;
    return this.retryMs;
  }
}

/** Resolves after `ms`, or at once on abort; never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

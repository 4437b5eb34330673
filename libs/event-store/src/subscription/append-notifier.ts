/**
 * Listeners to every append this thread makes, of any store: the all-in-one server hands them on
 * to its projector thread, whose subscriptions then wake at once too.
 */
const appendListeners = new Set<() => void>();

/** Every notifier of this thread, held weakly: `wakeAllSubscribers` reaches them. */
const notifiers = new Set<WeakRef<AppendNotifier>>();

/** Calls `listener` after every append this thread makes; the returned function stops it. */
export function onLocalAppend(listener: () => void): () => void {
  appendListeners.add(listener);
  return () => appendListeners.delete(listener);
}

/**
 * Wakes every subscriber of this thread as an append of its own would: for an append made on
 * another thread of the process, whose notice arrived as a message.
 */
export function wakeAllSubscribers(): void {
  for (const ref of notifiers) {
    const notifier = ref.deref();
    if (notifier) notifier.wake();
    else notifiers.delete(ref);
  }
}

/**
 * Wakes this process's subscribers right after one of its own appends, so live events need
 * no NOTIFY inside the append transaction; appends by other processes are found by polling.
 */
export class AppendNotifier {
  private waiters = new Set<() => void>();
  /** Appends so far: a reader that read after taking the mark waits only if it has not moved. */
  mark = 0;

  constructor() {
    if (notifiers.size >= 64) for (const ref of notifiers) if (!ref.deref()) notifiers.delete(ref);
    notifiers.add(new WeakRef(this));
  }

  notify(): void {
    this.wake();
    for (const listener of appendListeners) listener();
  }

  /** Wakes the waiting subscribers without telling the listeners (an append seen elsewhere). */
  wake(): void {
    this.mark++;
    if (this.waiters.size === 0) return;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Until the next append, `timeoutMs` or the abort; at once if an append came after `mark`. */
  wait(timeoutMs: number, signal?: AbortSignal, mark?: number): Promise<void> {
    if (signal?.aborted || (mark !== undefined && mark !== this.mark)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}

/** A small push-to-pull queue: what one side pushes, an async iterator pulls; bounded by `limit`. */
export class FrameQueue<T> {
  private readonly items: T[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  private failure: unknown = null;

  constructor(private readonly limit = 10_000) {}

  /** Frames waiting for the reader. */
  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.ended) return;
    // A consumer that stopped reading must not grow memory without end: the stream fails instead.
    if (this.items.length >= this.limit)
      return this.fail(new Error(`the stream's reader is ${this.limit} frames behind`));
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.failure = err;
    this.end();
  }

  async *drain(): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) {
        if (this.failure) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake(): void {
    const wake = this.waiter;
    this.waiter = null;
    wake?.();
  }
}

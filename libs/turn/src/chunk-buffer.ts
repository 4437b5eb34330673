import type { TurnContext } from './turn-context';

const FLUSH_MS = 50;
const FLUSH_DELTAS = 32;

/**
 * Collects streamed deltas and appends them as ChunksReceived batches (every ~50 ms or 32
 * deltas), never one event per token.
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;

  constructor(
    private readonly ctx: TurnContext,
    private readonly call: { turnNo: number; callNo: number; attempt: number },
  ) {}

  add(kind: 'text' | 'reasoning', delta: string): void {
    if (this.failure) throw this.failure;
    if (kind === 'text') this.text += delta;
    else this.reasoning += delta;
    this.count++;
    // A failed background flush is kept in `failure` and rethrown by the next add or flush.
    if (this.count >= FLUSH_DELTAS) this.flush().catch(() => undefined);
    else if (!this.timer) this.timer = setTimeout(() => this.flush().catch(() => undefined), FLUSH_MS);
  }

  /** Appends what is buffered; rethrows a failed earlier flush (a preempted turn). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.failure) throw this.failure;
    if (this.count === 0) return;
    const data = { ...this.call, text: this.text, reasoning: this.reasoning, count: this.count };
    this.text = '';
    this.reasoning = '';
    this.count = 0;
    try {
      await this.ctx.append([{ type: 'ChunksReceived', data }]);
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }

  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.text = '';
    this.reasoning = '';
    this.count = 0;
  }
}

import type { ConversationEvent } from '@parley/conversation';
import type { TurnContext } from './turn-context';

const FLUSH_MS = 50;
const FLUSH_DELTAS = 32;

/**
 * Collects streamed deltas and appends them as ChunksReceived batches (every ~50 ms or 32
 * deltas), never one event per token. The attempt's ModelCallStarted rides with the first
 * batch (or with the attempt's outcome): a crash before it is stored only means the call is
 * made again, which is what a stored but unfinished call means too.
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;
  private pending: ConversationEvent[];

  constructor(
    private readonly ctx: TurnContext,
    private readonly call: { turnNo: number; callNo: number; attempt: number },
    started: ConversationEvent,
  ) {
    this.pending = [started];
  }

  /** Events not stored yet (the ModelCallStarted), for the caller to append with its own. */
  takePending(): ConversationEvent[] {
    const pending = this.pending;
    this.pending = [];
    return pending;
  }

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
      await this.ctx.append([...this.takePending(), { type: 'ChunksReceived', data }]);
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }

  /**
   * Hands over everything not stored yet (ModelCallStarted, the last batch) so the caller
   * stores it in the same append as the call's outcome: one round trip instead of two.
   */
  drain(): ConversationEvent[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.failure) throw this.failure;
    const events = this.takePending();
    if (this.count > 0) {
      events.push({
        type: 'ChunksReceived',
        data: { ...this.call, text: this.text, reasoning: this.reasoning, count: this.count },
      });
    }
    this.text = '';
    this.reasoning = '';
    this.count = 0;
    return events;
  }

  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.text = '';
    this.reasoning = '';
    this.count = 0;
  }
}

import type { ConversationEvent } from '@parley/domain';
import type { TurnContext } from './turn-context';

export interface Batch {
  text: string;
  reasoning: string;
  count: number;
}

/** A batch is stored at the latest this long after its first delta. */
const FLUSH_MS = 50;
/** A batch closes at this many deltas (one ChunksReceived event never holds more). */
const FLUSH_DELTAS = 32;
/**
 * A closed batch is stored within this long, together with whatever else is ready by then: a
 * stream faster than the store (a local model, a cached reply) costs one append for several
 * batches, or none of its own when the call ends first and its outcome carries them.
 */
const CLOSED_BATCH_MS = 5;

/**
 * Collects streamed deltas into ChunksReceived batches (at most 32 deltas, stored within ~50 ms
 * of their first delta), never one event per token. The attempt's ModelCallStarted rides with
 * the first batch (or with the attempt's outcome): a crash before it is stored only means the
 * call is made again, which is what a stored but unfinished call means too.
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private failure: unknown = null;
  /** Events not stored yet: the ModelCallStarted and closed batches. */
  private pending: ConversationEvent[];

  /**
   * `batch` turns a closed batch into its ChunksReceived (the decider's RecordChunks); `started` is
   * the attempt's ModelCallStarted.
   */
  constructor(
    private readonly ctx: TurnContext,
    private readonly batch: (chunks: Batch) => ConversationEvent,
    started: ConversationEvent,
  ) {
    this.pending = [started];
  }

  add(kind: 'text' | 'reasoning', delta: string): void {
    if (this.failure) throw this.failure;
    if (kind === 'text') this.text += delta;
    else this.reasoning += delta;
    this.count++;
    if (this.count >= FLUSH_DELTAS) {
      this.close();
      this.flushWithin(CLOSED_BATCH_MS);
    } else this.flushWithin(FLUSH_MS);
  }

  /** Appends everything not stored yet; rethrows a failed earlier flush (a preempted turn). */
  async flush(): Promise<void> {
    const events = this.drain();
    if (events.length === 0 || events.every((e) => e.type === 'ModelCallStarted')) {
      this.pending = events; // nothing streamed yet: the start waits for the first batch
      return;
    }
    try {
      await this.ctx.append(events);
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }

  /**
   * Hands over everything not stored yet (ModelCallStarted, the batches) so the caller stores
   * it in the same append as the call's outcome: one round trip instead of two.
   */
  drain(): ConversationEvent[] {
    this.cancelTimer();
    if (this.failure) throw this.failure;
    this.close();
    const events = this.pending;
    this.pending = [];
    return events;
  }

  /** Drops what is not stored (an attempt that is given up). */
  discard(): void {
    this.cancelTimer();
    this.pending = [];
    this.text = '';
    this.reasoning = '';
    this.count = 0;
  }

  /** Turns the open batch into a ChunksReceived event waiting to be stored. */
  private close(): void {
    if (this.count === 0) return;
    this.pending.push(this.batch({ text: this.text, reasoning: this.reasoning, count: this.count }));
    this.text = '';
    this.reasoning = '';
    this.count = 0;
  }

  /** Makes sure a flush happens within `ms` (an earlier one already due stays). */
  private flushWithin(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    this.cancelTimer();
    this.timerDue = due;
    // A failed background flush is kept in `failure` and rethrown by the next add, flush or drain.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch(() => undefined);
    }, ms);
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

import type { ConversationEvent } from '@parley/domain';
import type { TurnContext } from './turn-context';

export interface Batch {
  text: string;
  reasoning: string;
  count: number;
}

/**
 * How a stream is cut into ChunksReceived events (`STREAM_EVENT_FIRST_MS`,
 * `STREAM_EVENT_WINDOW_MS`, `STREAM_EVENT_MAX_WINDOW_MS`, `STREAM_EVENT_MAX_CHARS`).
 */
export interface ChunkWindow {
  /** The first batch, which carries the call's start, is stored at the latest this long after its first delta. */
  firstMs: number;
  /** The second batch may wait this long; each later one twice as long as the one before… */
  windowMs: number;
  /** …up to this. */
  maxWindowMs: number;
  /** A batch closes once its text and reasoning reach this many characters. */
  maxChars: number;
}

/**
 * A closed batch is stored within this long, together with whatever else is ready by then: a
 * stream faster than the store (a local model, a cached reply) costs one append for several
 * batches, or none of its own when the call ends first and its outcome carries them.
 */
const CLOSED_BATCH_MS = 5;

/**
 * Collects streamed deltas into ChunksReceived batches, cut by time and by size, never one event
 * per token: the live deltas reach followers at once over LIVE_DELTAS, so the stored record of a
 * stream need not be fine-grained. The first batch is stored within `firstMs` of its first delta
 * (100 ms by default): it carries the attempt's ModelCallStarted (and what rode with it, such as
 * the idempotent tool calls before it), which followers wait for before they show the call's
 * text. The second may wait `windowMs` (2 s), each later one twice as long as the one before, up
 * to `maxWindowMs` (16 s), so a long reply at a person's reading speed is a handful of events whose
 * envelopes weigh little beside their text; a batch that reaches `maxChars` (2,048) is stored at
 * once. A crash loses at most one window of stored text, and the call is made again anyway. The
 * attempt's ModelCallStarted rides with the first batch (or with the attempt's outcome): a crash
 * before it is stored only means the call is made again, which is what a stored but unfinished
 * call means too.
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';
  private count = 0;
  private chars = 0;
  /** How long the open batch may wait after its first delta. */
  private windowMs: number;
  /** Batches closed so far. */
  private batches = 0;
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
    private readonly window: ChunkWindow,
  ) {
    this.pending = [started];
    this.windowMs = window.firstMs;
  }

  add(kind: 'text' | 'reasoning', delta: string): void {
    if (this.failure) throw this.failure;
    if (kind === 'text') this.text += delta;
    else this.reasoning += delta;
    this.count++;
    this.chars += delta.length;
    if (this.chars >= this.window.maxChars) {
      this.close();
      this.flushWithin(CLOSED_BATCH_MS);
    } else if (this.count === 1) this.flushWithin(this.windowMs);
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
    this.chars = 0;
  }

  /** Turns the open batch into a ChunksReceived event waiting to be stored. */
  private close(): void {
    if (this.count === 0) return;
    this.pending.push(this.batch({ text: this.text, reasoning: this.reasoning, count: this.count }));
    this.text = '';
    this.reasoning = '';
    this.count = 0;
    this.chars = 0;
    this.windowMs = this.batches++ === 0 ? this.window.windowMs : Math.min(this.windowMs * 2, this.window.maxWindowMs);
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

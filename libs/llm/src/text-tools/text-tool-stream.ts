import type { LlmToolCall } from '../llm.port';
import { FENCE, readTextReply, toolCallOf } from './text-tool-reply';

interface OpenFence {
  start: number;
  bodyStart: number;
  /** `json` or unlabelled: it may hold a call. */
  mayCall: boolean;
}

/**
 * Streams the text of a model without a tools API while holding back whatever may turn out to
 * be a tool call, so live watchers never see a call's JSON as the answer: all of a reply that
 * starts with `{`, and a reply from a ```json (or unlabelled) fence on, until the reply ends
 * (a fenced block that closes without a call is let through). A line that may be opening a
 * fence, and trailing whitespace, wait for the next delta. Lines are scanned once each, as
 * fencedBlocks reads them; at the end the reply is read whole (readTextReply): what is left of
 * its text, and its calls.
 */
export class TextToolStream {
  private text = '';
  private shown = 0;
  /** Where the line being written starts: the lines before it are scanned. */
  private lineStart = 0;
  private open: OpenFence | null = null;
  /** Where a block holding a call starts: nothing from there on is shown. */
  private heldFrom: number | null = null;
  /** Decided by the reply's first non-blank character: `{` holds it all. */
  private startsWithObject: boolean | null = null;

  constructor(private readonly unwrapAnswer: boolean) {}

  /** The part of the reply that can be shown now. */
  push(delta: string): string {
    this.text += delta;
    this.scanLines();
    const visible = this.visibleLength();
    if (visible <= this.shown) return '';
    const out = this.text.slice(this.shown, visible);
    this.shown = visible;
    return out;
  }

  /** The rest of the reply's text, and its tool calls. */
  end(): { rest: string; calls: LlmToolCall[] } {
    const reply = readTextReply(this.text, this.unwrapAnswer);
    const shown = this.text.slice(0, this.shown);
    return { rest: reply.content.startsWith(shown) ? reply.content.slice(shown.length) : '', calls: reply.calls };
  }

  private scanLines(): void {
    for (let newline = this.text.indexOf('\n', this.lineStart); newline >= 0 && this.heldFrom === null;) {
      const raw = this.text.slice(this.lineStart, newline);
      const line = raw.trim();
      if (this.open && line === '```') {
        const body = this.text.slice(this.open.bodyStart, this.lineStart).trim();
        if (this.open.mayCall && body.startsWith('{') && toolCallOf(body) !== null) this.heldFrom = this.open.start;
        this.open = null;
      } else if (!this.open && FENCE.test(raw)) {
        const label = line.slice(3).trim().toLowerCase();
        this.open = { start: this.lineStart, bodyStart: newline + 1, mayCall: label === '' || label === 'json' };
      }
      this.lineStart = newline + 1;
      newline = this.text.indexOf('\n', this.lineStart);
    }
  }

  private visibleLength(): number {
    const { text } = this;
    if (this.startsWithObject === null) {
      const first = /\S/.exec(text);
      if (first) this.startsWithObject = first[0] === '{';
    }
    if (this.startsWithObject !== false) return 0;
    let limit = text.length;
    if (this.heldFrom !== null) limit = this.heldFrom;
    else if (this.open?.mayCall) limit = this.open.start;
    else if (!this.open) {
      // Only the line's first characters tell whether it may open a fence: a long line is not re-read.
      const head = text.slice(this.lineStart, this.lineStart + 6);
      const whole = text.length - this.lineStart <= 6;
      if (FENCE.test(head) || (whole && /^[ \t]{0,3}`{0,2}$/.test(head))) limit = this.lineStart;
    }
    while (limit > this.shown && /\s/.test(text[limit - 1])) limit--;
    return limit;
  }
}

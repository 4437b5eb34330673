import type { LlmToolCall } from '../llm.port';
import { fencedBlocks, readTextReply, toolCallOf } from './text-tool-reply';

/**
 * Streams the text of a model without a tools API while holding back whatever may turn out to
 * be a tool call, so live watchers never see a call's JSON as the answer: all of a reply that
 * starts with `{`, and a reply from a ```json (or unlabelled) fence on, until the reply ends
 * (a fenced block that closes without a call is let through). A line that may be opening a
 * fence, and trailing whitespace, wait for the next delta. At the end the reply is read whole
 * (readTextReply): what is left of its text, and its calls.
 */
export class TextToolStream {
  private text = '';
  private shown = 0;

  constructor(private readonly unwrapAnswer: boolean) {}

  /** The part of the reply that can be shown now. */
  push(delta: string): string {
    this.text += delta;
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

  private visibleLength(): number {
    const { text } = this;
    const trimmed = text.trimStart();
    if (!trimmed || trimmed.startsWith('{')) return 0;
    let limit = text.length;
    if (text.includes('`')) {
      const { blocks, openAt } = fencedBlocks(text);
      const held = blocks.find((b) => b.mayCall && (b.end === text.length || this.callIn(b.body)));
      if (held) limit = held.start;
      else if (openAt === null) {
        const lineStart = text.lastIndexOf('\n') + 1;
        const line = text.slice(lineStart).trimStart();
        if (line.startsWith('```') || '```'.startsWith(line)) limit = lineStart;
      }
    }
    while (limit > this.shown && /\s/.test(text[limit - 1])) limit--;
    return limit;
  }

  private callIn(body: string): boolean {
    const trimmed = body.trim();
    return trimmed.startsWith('{') && toolCallOf(trimmed) !== null;
  }
}

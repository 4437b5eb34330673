const OPEN = '<think>';
const CLOSE = '</think>';

export interface SplitPiece {
  type: 'text' | 'reasoning';
  delta: string;
}

/** Length of the longest end of `text` that could be the start of `tag`. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/**
 * Separates `<think>…</think>` blocks that some servers (Ollama, LM Studio, raw reasoning
 * models) leave in the content, so reasoning never reaches the reply. Tags may be split
 * across chunks: a possible tag start is held back until the next chunk decides.
 */
export class ThinkSplitter {
  private buffer = '';
  private thinking = false;
  /** The reply after a think block starts with the blank lines that followed the tag: drop them. */
  private trimNext = false;

  push(chunk: string): SplitPiece[] {
    this.buffer += chunk;
    const out: SplitPiece[] = [];
    for (;;) {
      const tag = this.thinking ? CLOSE : OPEN;
      const at = this.buffer.indexOf(tag);
      if (at === -1) break;
      this.emit(out, this.buffer.slice(0, at));
      this.buffer = this.buffer.slice(at + tag.length);
      this.thinking = !this.thinking;
      if (!this.thinking) this.trimNext = true;
    }
    const held = partialTagAtEnd(this.buffer, this.thinking ? CLOSE : OPEN);
    this.emit(out, this.buffer.slice(0, this.buffer.length - held));
    this.buffer = this.buffer.slice(this.buffer.length - held);
    return out;
  }

  /** What is left at the end of the stream (an unfinished tag is plain text after all). */
  flush(): SplitPiece[] {
    const out: SplitPiece[] = [];
    this.emit(out, this.buffer);
    this.buffer = '';
    return out;
  }

  private emit(out: SplitPiece[], text: string): void {
    let delta = text;
    if (!this.thinking && this.trimNext) {
      delta = delta.replace(/^\s+/, '');
      if (delta) this.trimNext = false;
    }
    if (delta) out.push({ type: this.thinking ? 'reasoning' : 'text', delta });
  }
}

import { APIError } from 'openai';

/**
 * The JSON chunks of a streamed chat completion, read from its server-sent events: what the
 * openai SDK's `Stream` yields for `chat.completions.create({ stream: true })`, from the same
 * bytes, with the same failures, in one generator instead of the SDK's five (bytes → lines →
 * events → JSON → normalised chunks, each an async generator awaited per chunk).
 *
 * As the SDK does: `[DONE]` ends the stream (the rest of the body is not read); lines starting
 * with `:` are comments (keep-alives); an `error` event, or a chunk with an `error` member, is
 * thrown as an `APIError` without a status (the server gave up mid-reply); data that is not JSON
 * is a SyntaxError; a body that ends without `[DONE]` just ends. Lines end with LF, CRLF or CR,
 * and an event's data lines are joined with LF (the SSE standard). A transport failure is
 * thrown as the body throws it.
 */
export async function* sseChunks(body: AsyncIterable<Uint8Array>, headers: Headers): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  const event = new SseEvent(headers);
  // The text after the last line end read, in the pieces it came in: a long line (a large chunk
  // in many reads) is joined once its end comes, not copied again at every read.
  const held: string[] = [];
  let heldLength = 0;
  for await (const bytes of body) {
    const text = decoder.decode(bytes, { stream: true });
    const crLast = heldLength > 0 && held[held.length - 1].endsWith('\r');
    if (!crLast && text.indexOf('\n') < 0 && text.indexOf('\r') < 0) {
      held.push(text);
      heldLength += text.length;
      continue;
    }
    const pending = held.join('') + text;
    // The held text has no line end, but perhaps a CR last (half of a CRLF): not searched again.
    const ends = new LineEnds(pending, Math.max(0, heldLength - 1));
    let start = 0;
    for (;;) {
      const end = ends.from(start);
      if (end < 0) break;
      const line = pending.slice(start, end);
      start = end + (pending.charCodeAt(end) === CR && pending.charCodeAt(end + 1) === LF ? 2 : 1);
      const chunk = event.line(line);
      if (chunk === DONE) return;
      if (chunk !== undefined) yield chunk;
    }
    const rest = pending.slice(start);
    held.length = 0;
    held.push(rest);
    heldLength = rest.length;
  }
  const rest = held.join('') + decoder.decode();
  // What is left is one line without its end (an event cut off there is not sent, as SSE says),
  // or one ended by a CR that waited for an LF: a blank one sends the event before it.
  if (rest.endsWith('\r')) {
    const chunk = event.line(rest.slice(0, -1));
    if (chunk !== undefined && chunk !== DONE) yield chunk;
  }
}

const CR = 13;
const LF = 10;
const DONE = Symbol('done');

/**
 * The line ends of one text, found left to right: each search starts where the last one stopped,
 * so a text of many lines is scanned once (a server that never sends a CR costs one search).
 */
class LineEnds {
  /** The last LF and CR found (-1: none yet). */
  private lf = -1;
  private cr = -1;
  /** Where each search stopped: at what it found, or the text's length once there is no more. */
  private searchedLf: number;
  private searchedCr: number;

  /** `searched`: the text before it is known to hold no line end. */
  constructor(
    private readonly text: string,
    searched = 0,
  ) {
    this.searchedLf = searched - 1;
    this.searchedCr = searched - 1;
  }

  /**
   * Where the line from `start` ends: its LF, or its CR. A CR last in the text may be the first
   * half of a CRLF whose LF has not arrived: that line waits for more (-1).
   */
  from(start: number): number {
    if (this.lf < start && this.searchedLf < this.text.length) {
      this.lf = this.text.indexOf('\n', Math.max(start, this.searchedLf + 1));
      this.searchedLf = this.lf < 0 ? this.text.length : this.lf;
    }
    if (this.cr < start && this.searchedCr < this.text.length) {
      this.cr = this.text.indexOf('\r', Math.max(start, this.searchedCr + 1));
      this.searchedCr = this.cr < 0 ? this.text.length : this.cr;
    }
    const lf = this.lf >= start ? this.lf : -1;
    const cr = this.cr >= start ? this.cr : -1;
    if (cr < 0 || (lf >= 0 && lf < cr)) return lf;
    return cr === this.text.length - 1 ? -1 : cr;
  }
}

/** One event being read: its name and data lines, until the blank line that sends it. */
class SseEvent {
  private name: string | null = null;
  private data: string | null = null;

  constructor(private readonly headers: Headers) {}

  /** Takes one line; at a blank line, the event's chunk, DONE, or undefined (nothing to send). */
  line(line: string): unknown {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') this.data = this.data === null ? value : `${this.data}\n${value}`;
    else if (field === 'event') this.name = value;
    return undefined;
  }

  private dispatch(): unknown {
    const { name, data } = this;
    this.name = null;
    this.data = null;
    if (data === null) return undefined;
    if (data === '[DONE]') return DONE;
    let chunk: { error?: unknown } | null;
    try {
      chunk = JSON.parse(data) as { error?: unknown } | null;
    } catch {
      throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
    }
    if (name === 'error')
      throw new APIError(undefined, (chunk?.error ?? chunk ?? undefined) as object, undefined, this.headers);
    if (chunk?.error) throw new APIError(undefined, chunk.error as object, undefined, this.headers);
    return chunk;
  }
}

/** How a document is cut into chunks: token windows with an overlap (seed 003: 512 and 50). */
export interface ChunkingOptions {
  /** Most tokens in one chunk (CHUNK_TOKENS). */
  chunkTokens: number;
  /** Tokens a chunk repeats from the end of the one before (CHUNK_OVERLAP), below chunkTokens. */
  overlap: number;
  /** The token count of a text (countTokens with the embedding model's name). */
  count: (text: string) => number;
}

export interface TextChunk {
  text: string;
  tokens: number;
}

/** A sentence (or a piece of an overlong one) with its token count. */
interface Unit {
  text: string;
  tokens: number;
  /** The first unit of its paragraph: joined to the one before with a blank line. */
  opensParagraph: boolean;
}

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** A blank line (or more) ends a paragraph; single line breaks inside one are kept as spaces. */
function paragraphsOf(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);
}

function sentencesOf(paragraph: string): string[] {
  return [...sentences.segment(paragraph)].map((s) => s.segment.trim()).filter((s) => s.length > 0);
}

/** Cuts a word into pieces of at most `maxBytes` UTF-8 bytes (a token is at least one byte). */
function slicesOf(word: string, maxBytes: number): string[] {
  const slices: string[] = [];
  let slice = '';
  let bytes = 0;
  for (const ch of word) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes && slice) {
      slices.push(slice);
      slice = '';
      bytes = 0;
    }
    slice += ch;
    bytes += size;
  }
  if (slice) slices.push(slice);
  return slices;
}

/**
 * A sentence longer than the window, cut between words into pieces that fit; a single word
 * longer than the window (a long URL, a run of digits) is cut between characters. Linear: each
 * word is counted once, with the space before it.
 */
function piecesOf(sentence: string, chunkTokens: number, count: (text: string) => number): string[] {
  const pieces: string[] = [];
  let current = '';
  let tokens = 0;
  const push = () => {
    if (current) pieces.push(current);
    current = '';
    tokens = 0;
  };
  for (const word of sentence.split(/\s+/).filter((w) => w.length > 0)) {
    const own = count(word);
    if (own > chunkTokens) {
      push();
      pieces.push(...slicesOf(word, chunkTokens));
      continue;
    }
    const added = current ? count(` ${word}`) : own;
    if (tokens + added > chunkTokens) push();
    current = current ? `${current} ${word}` : word;
    tokens += current === word ? own : added;
  }
  push();
  return pieces;
}

/** Letters without a break between them that are counted a slice at a time (see `bounded`). */
const RUN_SLICE = 100;
const LONG_RUN = new RegExp(`\\S{${RUN_SLICE + 1},}`, 'g');

/**
 * `count` made linear: BPE on a long run of characters without whitespace takes time quadratic
 * in its length (20,000 letters: minutes), so such runs are counted in slices of RUN_SLICE
 * characters and the slices' counts added (close to the whole's: the run is one pre-token).
 */
export function bounded(count: (text: string) => number): (text: string) => number {
  return (text) => {
    const runs = text.match(LONG_RUN);
    if (!runs) return count(text);
    let total = count(text.replace(LONG_RUN, ' '));
    for (const run of runs) for (let i = 0; i < run.length; i += RUN_SLICE) total += count(run.slice(i, i + RUN_SLICE));
    return total;
  };
}

function unitsOf(text: string, chunkTokens: number, count: (text: string) => number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of paragraphsOf(text)) {
    let first = true;
    for (const sentence of sentencesOf(paragraph)) {
      const tokens = count(sentence);
      const parts = tokens <= chunkTokens ? [sentence] : piecesOf(sentence, chunkTokens, count);
      for (const part of parts) {
        units.push({
          text: part,
          tokens: part === sentence ? tokens : count(part),
          opensParagraph: first,
        });
        first = false;
      }
    }
  }
  return units;
}

const join = (units: readonly Unit[]) =>
  units.map((u, i) => (i === 0 ? u.text : `${u.opensParagraph ? '\n\n' : ' '}${u.text}`)).join('');

/** Tokens of units joined: each unit's own count plus one for each separator (BPE merges rarely add). */
const budget = (units: readonly Unit[]) => units.reduce((sum, u, i) => sum + u.tokens + (i === 0 ? 0 : 1), 0);

/** The trailing units of a chunk that fit in the overlap, whole sentences only. */
function tailOf(units: readonly Unit[], overlap: number): Unit[] {
  const tail: Unit[] = [];
  for (let i = units.length - 1; i >= 0; i--) {
    if (budget([units[i], ...tail]) > overlap) break;
    tail.unshift(units[i]);
  }
  return tail;
}

/**
 * Cuts a document into chunks of at most `chunkTokens` tokens, in document order. Breaks fall
 * between paragraphs where they can (a paragraph that fits a window is not split when the chunk
 * so far is at least half full), else between sentences, and inside a sentence (between words)
 * only when that sentence alone is longer than the window. Each chunk after the first starts
 * with the last whole sentences of the one before, up to `overlap` tokens. Token counts are
 * `options.count`'s, but for runs of over RUN_SLICE characters without whitespace (see
 * `bounded`). Pure: the same text and options give the same chunks.
 */
export function chunkText(text: string, options: ChunkingOptions): TextChunk[] {
  if (options.overlap >= options.chunkTokens) throw new Error('the overlap must be smaller than the chunk');
  const count = bounded(options.count);
  const units = unitsOf(text, options.chunkTokens, count);
  const chunks: TextChunk[] = [];
  let current: Unit[] = [];
  /** How many units at the head of `current` repeat the chunk before. */
  let carried = 0;
  /**
   * Ends the chunk. The budget is an estimate; should the exact count be over the window, the
   * last units go back to the next chunk (answered: how many), then the overlap gives way. The
   * text is counted once when it fits, as it nearly always does.
   */
  const flush = (): number => {
    let back = 0;
    let body = join(current);
    let tokens = count(body);
    while (tokens > options.chunkTokens && (current.length > carried + 1 || carried > 0)) {
      if (current.length > carried + 1) {
        current.pop();
        back++;
      } else {
        current.shift();
        carried--;
      }
      body = join(current);
      tokens = count(body);
    }
    chunks.push({ text: body, tokens });
    const tail = tailOf(current, options.overlap);
    current = tail.length < current.length ? tail : [];
    carried = current.length;
    return back;
  };

  let i = 0;
  while (i < units.length || current.length > carried) {
    if (i >= units.length) {
      i -= flush();
      continue;
    }
    const unit = units[i];
    if (current.length > carried && unit.opensParagraph) {
      // A whole paragraph that would not fit after what the chunk holds starts a chunk of its
      // own, if the chunk is half full already.
      let end = i + 1;
      while (end < units.length && !units[end].opensParagraph) end++;
      const paragraph = units.slice(i, end);
      if (
        budget(paragraph) <= options.chunkTokens &&
        budget([...current, ...paragraph]) > options.chunkTokens &&
        budget(current) >= options.chunkTokens / 2
      ) {
        i -= flush();
        continue;
      }
    }
    if (current.length > 0 && budget([...current, unit]) > options.chunkTokens) {
      if (current.length > carried) {
        i -= flush();
        continue;
      }
      // The overlap and the next unit may not fit together: the overlap gives way.
      while (current.length > 0 && budget([...current, unit]) > options.chunkTokens) {
        current.shift();
        carried = Math.max(0, carried - 1);
      }
    }
    current.push(unit);
    i++;
  }
  return chunks;
}

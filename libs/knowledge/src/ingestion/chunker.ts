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
const WORD_GAP = /(?<=\S)(?=\s)/;

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

/**
 * A sentence longer than the window, cut between words into pieces that fit; a single word
 * longer than the window (a long URL, a run of digits) is cut between characters.
 */
function piecesOf(sentence: string, options: ChunkingOptions): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const word of sentence.split(WORD_GAP)) {
    const candidate = current + word;
    if (options.count(candidate.trim()) <= options.chunkTokens) {
      current = candidate;
      continue;
    }
    if (current.trim()) pieces.push(current.trim());
    current = word;
    if (options.count(word.trim()) > options.chunkTokens) {
      const chars = [...word.trim()];
      let part = '';
      for (const ch of chars) {
        if (part && options.count(part + ch) > options.chunkTokens) {
          pieces.push(part);
          part = '';
        }
        part += ch;
      }
      current = part;
    }
  }
  if (current.trim()) pieces.push(current.trim());
  return pieces;
}

function unitsOf(text: string, options: ChunkingOptions): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of paragraphsOf(text)) {
    let first = true;
    for (const sentence of sentencesOf(paragraph)) {
      const tokens = options.count(sentence);
      const parts = tokens <= options.chunkTokens ? [sentence] : piecesOf(sentence, options);
      for (const part of parts) {
        units.push({
          text: part,
          tokens: part === sentence ? tokens : options.count(part),
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
 * with the last whole sentences of the one before, up to `overlap` tokens. Pure: the same text
 * and options give the same chunks.
 */
export function chunkText(text: string, options: ChunkingOptions): TextChunk[] {
  if (options.overlap >= options.chunkTokens) throw new Error('the overlap must be smaller than the chunk');
  const units = unitsOf(text, options);
  const chunks: TextChunk[] = [];
  let current: Unit[] = [];
  /** How many units at the head of `current` repeat the chunk before. */
  let carried = 0;
  const flush = () => {
    const body = join(current);
    chunks.push({ text: body, tokens: options.count(body) });
    const tail = tailOf(current, options.overlap);
    current = tail.length < current.length ? tail : [];
    carried = current.length;
  };

  for (let i = 0; i < units.length; i++) {
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
      )
        flush();
    }
    if (current.length > 0 && budget([...current, unit]) > options.chunkTokens) {
      if (current.length > carried) flush();
      // The overlap and the next unit may not fit together: the overlap gives way.
      while (current.length > 0 && budget([...current, unit]) > options.chunkTokens) {
        current.shift();
        carried = Math.max(0, carried - 1);
      }
    }
    current.push(unit);
  }
  if (current.length > carried) flush();
  return chunks;
}

/**
 * The context block of a prompt (seed 004 §5.1): chunks of documents put before the user's
 * message, fitted to what the prompt budget leaves (§7). Pure and generic: retrieval in turns
 * passes the chunks a vector search found, and a caller that brings its own chunks (seed 004's
 * `context_chunks`) passes those; neither is tied to a vector store.
 */

/** One piece of a document offered to the prompt. */
export interface ContextChunk {
  /** Unique among the chunks passed (a chunk id, seed 004's `section_id`). */
  id: string;
  documentId: string;
  /**
   * Where the chunk stands in its document (a chunk index): chunks of one document whose
   * positions follow each other are adjacent and merge into one block. Absent: never merged.
   */
  position?: number;
  text: string;
  /** Relevance, higher is closer (a cosine similarity). Absent: the order given ranks the chunks, first is best. */
  score?: number;
  /** How the model may cite the document; the document id when absent. */
  title?: string;
  /** Where the chunk came from (a collection code), shown in its label. */
  source?: string;
  pageStart?: number;
  pageEnd?: number;
  /**
   * The text's token count with the prompt's tokenizer, when known (counted at ingestion): the
   * fitting then adds up counts instead of tokenizing the block again.
   */
  tokens?: number;
}

/** Adjacent chunks of one document, as one labelled section of the context block. */
export interface ContextBlock {
  documentId: string;
  title?: string;
  source?: string;
  /** The chunks it holds, in document order. */
  chunkIds: string[];
  text: string;
  /** The best score of its chunks (null when the chunks had none). */
  score: number | null;
  pageStart?: number;
  pageEnd?: number;
}

export interface DroppedChunk {
  id: string;
  documentId: string;
  score: number | null;
  /** `budget`: the context would not fit the prompt budget with it. */
  reason: 'budget';
}

export interface FittedContext {
  /** The sections, best first; empty when nothing fits. */
  blocks: ContextBlock[];
  /** The chunks kept, best first. */
  kept: ContextChunk[];
  /** The chunks left out, lowest score first (the order they were dropped). */
  dropped: DroppedChunk[];
  /** The labelled block as the prompt carries it (header and sections); null when nothing is kept. */
  text: string | null;
  /**
   * Tokens of `text` (0 when null): counted, or, when every chunk kept came with its `tokens`,
   * their sum with the header, labels and separators counted and a margin at every seam — never
   * fewer than the text's count.
   */
  tokens: number;
}

export interface FitOptions {
  /** Tokens the context block may take; null: no budget, every chunk is kept. */
  maxTokens: number | null;
  countTokens: (text: string) => number;
  /** The line the block opens with; CONTEXT_HEADER by default. */
  header?: string;
}

/** How the context block opens (seed 004 §5.1). */
export const CONTEXT_HEADER =
  'Below are relevant sections from the documents. Use them to answer when they apply, and cite a section by its source label.';

/** How the text of adjacent chunks is joined within a block. */
const CHUNK_JOINER = '\n';

/**
 * The chunks as a context block that fits `maxTokens`: adjacent chunks of one document merged
 * into a block, blocks ordered best first, and, while the block is over budget, the chunk with
 * the lowest score dropped (the last given among equals), then merged again. Chunks with the
 * same id are kept once (the first).
 */
export function fitContext(chunks: readonly ContextChunk[], options: FitOptions): FittedContext {
  const seen = new Set<string>();
  const ranked = chunks
    .filter((c) => !seen.has(c.id) && seen.add(c.id))
    .map((chunk, rank) => ({ chunk, rank }))
    .sort((a, b) => scoreOf(b) - scoreOf(a) || a.rank - b.rank);
  const header = options.header ?? CONTEXT_HEADER;
  const dropped: DroppedChunk[] = [];
  let kept = ranked;
  for (;;) {
    const blocks = mergeAdjacent(kept.map((k) => k.chunk));
    const text = blocks.length > 0 ? renderContext(blocks, header) : null;
    const tokens = text === null ? 0 : tokensOf(blocks, kept, header, text, options.countTokens);
    if (options.maxTokens === null || tokens <= options.maxTokens || kept.length === 0) {
      return { blocks, kept: kept.map((k) => k.chunk), dropped, text, tokens };
    }
    const lowest = kept[kept.length - 1].chunk;
    dropped.push({ id: lowest.id, documentId: lowest.documentId, score: lowest.score ?? null, reason: 'budget' });
    kept = kept.slice(0, -1);
  }
}

/**
 * A seam (where two pieces of the block meet: a separator between them) costs at most this many
 * tokens beyond the pieces' own: the separator's, and one for a token the tokenizer might split
 * differently across it.
 */
const SEAM_TOKENS = 2;

function tokensOf(
  blocks: ContextBlock[],
  kept: { chunk: ContextChunk }[],
  header: string,
  text: string,
  count: (text: string) => number,
): number {
  if (kept.some((k) => k.chunk.tokens === undefined)) return count(text);
  const chunks = kept.reduce((n, k) => n + k.chunk.tokens!, 0);
  const labels = blocks.reduce((n, b) => n + count(sourceLabel(b)), 0);
  // Header | label, text | chunk, chunk … | label …: one seam after the header and each label, one between chunks.
  const seams = 2 * blocks.length + (kept.length - blocks.length);
  return count(header) + labels + chunks + seams * SEAM_TOKENS;
}

/** Higher is better; without scores the given order ranks (the sort falls back to it). */
const scoreOf = (r: { chunk: ContextChunk }): number => r.chunk.score ?? 0;

/**
 * Adjacent chunks of one document (the same source and document, positions one apart) as one
 * block; blocks ordered by their best chunk, in the order given among equals.
 */
export function mergeAdjacent(chunks: readonly ContextChunk[]): ContextBlock[] {
  const groups = new Map<string, { chunks: ContextChunk[]; first: number }>();
  chunks.forEach((c, i) => {
    const key = `${c.source ?? ''}\u0000${c.documentId}`;
    const group = groups.get(key);
    if (group) group.chunks.push(c);
    else groups.set(key, { chunks: [c], first: i });
  });
  const blocks: { block: ContextBlock; first: number }[] = [];
  for (const group of groups.values()) {
    const inOrder = [...group.chunks].sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity));
    let run: ContextChunk[] = [];
    const flush = () => {
      if (run.length > 0) blocks.push({ block: blockOf(run), first: group.first });
      run = [];
    };
    for (const c of inOrder) {
      const last = run.at(-1);
      const adjacent = last?.position !== undefined && c.position !== undefined && c.position === last.position + 1;
      if (!adjacent) flush();
      run.push(c);
    }
    flush();
  }
  return blocks.sort((a, b) => (b.block.score ?? 0) - (a.block.score ?? 0) || a.first - b.first).map((b) => b.block);
}

function blockOf(run: ContextChunk[]): ContextBlock {
  const first = run[0];
  const scores = run.map((c) => c.score).filter((s): s is number => s !== undefined);
  const starts = run.map((c) => c.pageStart).filter((p): p is number => p !== undefined);
  const ends = run.map((c) => c.pageEnd ?? c.pageStart).filter((p): p is number => p !== undefined);
  return {
    documentId: first.documentId,
    ...(first.title === undefined ? {} : { title: first.title }),
    ...(first.source === undefined ? {} : { source: first.source }),
    chunkIds: run.map((c) => c.id),
    text: run.map((c) => c.text).join(CHUNK_JOINER),
    score: scores.length > 0 ? Math.max(...scores) : null,
    ...(starts.length > 0 ? { pageStart: Math.min(...starts) } : {}),
    ...(ends.length > 0 ? { pageEnd: Math.max(...ends) } : {}),
  };
}

/** A block's source label: `[Source: <title> (document <id>, <collection>, pages a–b)]`. */
export function sourceLabel(block: ContextBlock): string {
  const where = [
    `document ${block.documentId}`,
    ...(block.source ? [block.source] : []),
    ...(block.pageStart !== undefined
      ? [
          block.pageEnd !== undefined && block.pageEnd !== block.pageStart
            ? `pages ${block.pageStart}–${block.pageEnd}`
            : `page ${block.pageStart}`,
        ]
      : []),
  ].join(', ');
  return block.title ? `[Source: ${block.title} (${where})]` : `[Source: ${where}]`;
}

/** The context block: the header, then each section under its source label, a blank line between. */
export function renderContext(blocks: readonly ContextBlock[], header: string = CONTEXT_HEADER): string {
  return [header, ...blocks.map((b) => `${sourceLabel(b)}\n${b.text}`)].join('\n\n');
}

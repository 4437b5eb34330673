import { countTokens } from '@parley/prompt';
import { chunkText, type ChunkingOptions } from './chunker';

const count = (text: string) => countTokens(text, 'sim-embed');
const options = (chunkTokens: number, overlap: number): ChunkingOptions => ({ chunkTokens, overlap, count });

/** A sentence of about `words` words, numbered so each is unique. */
const sentence = (n: number, words = 12) =>
  `Sentence ${n} ${Array.from({ length: words - 3 }, (_, i) => `word${(n * 7 + i) % 97}`).join(' ')} ends.`;

describe('chunkText: token windows on paragraph and sentence boundaries', () => {
  it('keeps a short document whole, and drops blank paragraphs', () => {
    const chunks = chunkText('Refunds take 14 days.\n\n\n   \n\nThe office opens at nine.', options(512, 50));
    expect(chunks).toEqual([
      {
        text: 'Refunds take 14 days.\n\nThe office opens at nine.',
        tokens: count('Refunds take 14 days.\n\nThe office opens at nine.'),
      },
    ]);
    expect(chunkText('  \n\n ', options(512, 50))).toEqual([]);
  });

  it('cuts a long document into windows of at most chunkTokens, between sentences, each starting with the end of the one before', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) =>
      Array.from({ length: 6 }, (_, s) => sentence(p * 6 + s)).join(' '),
    );
    const chunks = chunkText(paragraphs.join('\n\n'), options(120, 30));
    expect(chunks.length).toBeGreaterThan(5);
    const allSentences = paragraphs.flatMap((p) => p.split(/(?<=ends\.) /));
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.tokens).toBe(count(chunk.text));
      expect(chunk.tokens).toBeLessThanOrEqual(120);
      // Every chunk is made of whole sentences.
      for (const part of chunk.text.split(/(?<=ends\.)\s+/)) expect(allSentences).toContain(part);
      if (i > 0) {
        // It repeats the last whole sentences of the chunk before, within the overlap.
        const before = chunks[i - 1].text.split(/(?<=ends\.)\s+/);
        const head = chunk.text.split(/(?<=ends\.)\s+/)[0];
        expect(before).toContain(head);
        const repeated = before.slice(before.indexOf(head)).join(' ');
        expect(count(repeated)).toBeLessThanOrEqual(30 + before.length);
      }
    }
    // Nothing is lost: every sentence is in some chunk, in order.
    const seen = chunks.flatMap((c) => c.text.split(/(?<=ends\.)\s+/));
    expect([...new Set(seen)]).toEqual(allSentences);
  });

  it('ends a chunk at a paragraph break rather than splitting a paragraph that fits a window', () => {
    const small = (p: number) => Array.from({ length: 3 }, (_, s) => sentence(p * 3 + s)).join(' ');
    const text = [small(0), small(1), small(2), small(3)].join('\n\n');
    const chunks = chunkText(text, options(count(small(0)) * 2 + 20, 0));
    // Two paragraphs fit a window; the third starts the next chunk whole.
    expect(chunks.map((c) => c.text)).toEqual([`${small(0)}\n\n${small(1)}`, `${small(2)}\n\n${small(3)}`]);
  });

  it('cuts a sentence longer than the window between words, and a word longer than it between characters', () => {
    const long = Array.from({ length: 300 }, (_, i) => `token${i}`).join(' ') + '.';
    const chunks = chunkText(long, options(64, 8));
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.tokens).toBeLessThanOrEqual(64);
      expect(c.text).toMatch(/^token\d+/);
      expect(c.text).toMatch(/token\d+\.?$/);
    }
    // 20,000 letters without a break: counted by slices, in a second or two (whole, BPE takes minutes).
    const giant = 'x'.repeat(20_000);
    const started = performance.now();
    const pieces = chunkText(giant, options(64, 0));
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(pieces.map((c) => c.text.replace(/ /g, '')).join('')).toBe(giant);
    for (const c of pieces) expect(c.tokens).toBeLessThanOrEqual(64);
  });

  it('gives the same chunks for the same text, and refuses an overlap as large as the window', () => {
    const text = Array.from({ length: 40 }, (_, i) => sentence(i)).join(' ');
    expect(chunkText(text, options(100, 20))).toEqual(chunkText(text, options(100, 20)));
    expect(() => chunkText(text, options(50, 50))).toThrow('overlap');
  });

  it('cuts by the default 512/50 windows of seed 003', () => {
    const text = Array.from({ length: 400 }, (_, i) => sentence(i, 20)).join(' ');
    const chunks = chunkText(text, options(512, 50));
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks.slice(0, -1)) expect(c.tokens).toBeGreaterThan(400);
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(512);
  });
});

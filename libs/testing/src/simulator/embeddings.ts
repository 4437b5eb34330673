/** Vector length when a request names no `dimensions`. */
export const SIM_EMBEDDING_DIMENSIONS = 256;

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** FNV-1a, 32 bits: cheap and the same on every run. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A deterministic embedding: each word and each pair of adjacent words is hashed to one
 * dimension (with a hashed sign), and the sum is L2-normalised. Texts that share words get
 * close vectors; a text with no words gets a fixed unit vector.
 */
export function simEmbedding(text: string, dimensions = SIM_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const ws = words(text);
  const grams = [...ws, ...ws.slice(1).map((w, i) => `${ws[i]} ${w}`)];
  for (const gram of grams) {
    const hash = fnv1a(gram);
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((v) => v / norm);
}

/** Tokens the simulator reports for an input: its words, at least one. */
export const simEmbeddingTokens = (text: string): number => Math.max(1, words(text).length);

import { randomUUID } from 'node:crypto';
import type { Chunk, MetadataValue, SearchHit, VectorStore } from '../vector-store.port';

export interface VectorStoreHarness {
  store: VectorStore;
  close(): Promise<void>;
}

/** Dimensions of the contract's vectors. */
export const CONTRACT_DIMENSIONS = 16;

/** A seeded generator (mulberry32), so both adapters see the same vectors. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const randomVector = (next: () => number, dims = CONTRACT_DIMENSIONS): number[] =>
  Array.from({ length: dims }, () => next() * 2 - 1);

export const cosine = (a: readonly number[], b: readonly number[]): number => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};

/** The reference answer: every chunk scored in process, best first, ties by id. */
export function bruteForce(chunks: readonly Chunk[], vector: number[], topK: number, threshold = -2): string[] {
  return chunks
    .map((c) => ({ id: c.id, score: cosine(c.embedding, vector) }))
    .filter((s) => s.score >= threshold)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, topK)
    .map((s) => s.id);
}

const collectionName = () => `c-${randomUUID().slice(0, 8)}`;

function chunk(
  collection: string,
  i: number,
  embedding: number[],
  metadata: Record<string, MetadataValue> = {},
): Chunk {
  return {
    id: `chunk-${String(i).padStart(4, '0')}`,
    collection,
    documentId: `doc-${i % 5}`,
    text: `text ${i}`,
    tokens: 2,
    metadata,
    embedding,
  };
}

const ids = (hits: SearchHit[]) => hits.map((h) => h.chunk.id);

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

const validationFailed = (path: string) =>
  expect.objectContaining({
    code: 'VALIDATION_FAILED',
    details: { problems: expect.arrayContaining([expect.objectContaining({ path })]) },
  });

/**
 * What every VectorStore does (docs/knowledge.md): upsert, replace, delete, count, and cosine
 * search with top-K, threshold and metadata filter, ranked as an exact in-process scan ranks the
 * same data; bad input fails with VALIDATION_FAILED and changes nothing.
 */
export function describeVectorStoreContract(name: string, setup: () => Promise<VectorStoreHarness>): void {
  describe(`${name} — vector-store contract`, () => {
    let harness: VectorStoreHarness | undefined;
    const store = (): VectorStore => harness!.store;

    beforeAll(async () => {
      harness = await setup();
      await harness.store.init();
      await harness.store.init(); // idempotent
    }, 60_000);
    afterAll(() => harness?.close());

    it('stores chunks, counts them per collection and returns them with their fields', async () => {
      const c = collectionName();
      const next = seeded(1);
      await store().upsert([chunk(c, 1, randomVector(next), { lang: 'en', page: 3 }), chunk(c, 2, randomVector(next))]);
      expect(await store().count(c)).toBe(2);
      expect(await store().count(collectionName())).toBe(0);
      const [v] = [randomVector(seeded(1))];
      const [best] = await store().search({ collection: c, vector: v, topK: 1 });
      expect(best.chunk).toEqual({
        id: 'chunk-0001',
        collection: c,
        documentId: 'doc-1',
        text: 'text 1',
        tokens: 2,
        metadata: { lang: 'en', page: 3 },
      });
      expect(best.score).toBeCloseTo(1, 5);
    });

    it('replaces a chunk upserted again under the same id', async () => {
      const c = collectionName();
      const next = seeded(2);
      const first = chunk(c, 1, randomVector(next));
      await store().upsert([first]);
      const moved = { ...first, text: 'new text', documentId: 'doc-9', embedding: randomVector(next) };
      await store().upsert([moved]);
      expect(await store().count(c)).toBe(1);
      const [hit] = await store().search({ collection: c, vector: moved.embedding, topK: 1 });
      expect(hit.chunk).toMatchObject({ text: 'new text', documentId: 'doc-9' });
      expect(hit.score).toBeCloseTo(1, 5);
    });

    it('ranks the top K as an exact scan of the same data does, with the cosine similarity as score', async () => {
      const c = collectionName();
      const next = seeded(3);
      const chunks = Array.from({ length: 300 }, (_, i) => chunk(c, i, randomVector(next)));
      await store().upsert(chunks);
      for (let q = 0; q < 5; q++) {
        const vector = randomVector(next);
        const hits = await store().search({ collection: c, vector, topK: 4 });
        expect(ids(hits)).toEqual(bruteForce(chunks, vector, 4));
        for (const hit of hits) {
          expect(hit.score).toBeCloseTo(cosine(chunks.find((x) => x.id === hit.chunk.id)!.embedding, vector), 5);
        }
      }
    });

    it('leaves out hits under the threshold, and other collections', async () => {
      const c = collectionName();
      const other = collectionName();
      const base = Array.from({ length: CONTRACT_DIMENSIONS }, (_, i) => (i === 0 ? 1 : 0));
      const near = base.map((x, i) => (i === 1 ? 0.2 : x)); // cos ≈ 0.98
      const far = base.map((x, i) => (i === 0 ? 0.1 : i === 2 ? 1 : x)); // cos ≈ 0.0995
      await store().upsert([chunk(c, 1, near), chunk(c, 2, far), chunk(other, 3, base)]);
      const hits = await store().search({ collection: c, vector: base, topK: 10, threshold: 0.5 });
      expect(ids(hits)).toEqual(['chunk-0001']);
      expect(ids(await store().search({ collection: c, vector: base, topK: 10 }))).toEqual([
        'chunk-0001',
        'chunk-0002',
      ]);
    });

    it('filters on metadata by equality of every key given', async () => {
      const c = collectionName();
      const next = seeded(4);
      const chunks = Array.from({ length: 40 }, (_, i) =>
        chunk(c, i, randomVector(next), { lang: i % 2 ? 'en' : 'de', page: i % 4, public: i % 3 === 0 }),
      );
      await store().upsert(chunks);
      const vector = randomVector(next);
      const matching = (m: Record<string, MetadataValue>) =>
        chunks.filter((x) => Object.entries(m).every(([k, v]) => x.metadata[k] === v));
      const filters: Record<string, MetadataValue>[] = [
        { lang: 'en' },
        { lang: 'de', page: 2 },
        { public: true },
        { lang: 'fr' },
      ];
      for (const filter of filters) {
        const hits = await store().search({ collection: c, vector, topK: 5, filter });
        expect(ids(hits)).toEqual(bruteForce(matching(filter), vector, 5));
      }
    });

    it('deletes a document’s chunks and says how many', async () => {
      const c = collectionName();
      const next = seeded(5);
      await store().upsert(Array.from({ length: 10 }, (_, i) => chunk(c, i, randomVector(next))));
      expect(await store().deleteDocument(c, 'doc-3')).toBe(2);
      expect(await store().deleteDocument(c, 'doc-3')).toBe(0);
      expect(await store().count(c)).toBe(8);
      const hits = await store().search({ collection: c, vector: randomVector(next), topK: 10 });
      expect(hits.map((h) => h.chunk.documentId)).not.toContain('doc-3');
    });

    it('deletes a whole collection’s chunks, says how many, and leaves other collections alone', async () => {
      const c = collectionName();
      const other = collectionName();
      const next = seeded(25);
      await store().upsert(Array.from({ length: 12 }, (_, i) => chunk(c, i, randomVector(next))));
      await store().upsert(Array.from({ length: 3 }, (_, i) => chunk(other, i, randomVector(next))));
      expect(await store().count(c)).toBe(12);
      expect(await store().deleteCollection(c)).toBe(12);
      expect(await store().deleteCollection(c)).toBe(0);
      expect(await store().count(c)).toBe(0);
      expect(await store().search({ collection: c, vector: randomVector(next), topK: 10 })).toEqual([]);
      expect(await store().count(other)).toBe(3);
      // The collection's name can be used again from nothing.
      await store().upsert([chunk(c, 1, randomVector(next))]);
      expect(await store().count(c)).toBe(1);
    });

    it("prunes a document's chunks to the ids kept, and leaves other documents alone", async () => {
      const c = collectionName();
      const next = seeded(15);
      // doc-1 holds chunks 1, 6, 11; doc-2 holds 2, 7, 12.
      await store().upsert(Array.from({ length: 15 }, (_, i) => chunk(c, i, randomVector(next))));
      expect(await store().pruneDocument(c, 'doc-1', ['chunk-0001'])).toBe(2);
      expect(await store().pruneDocument(c, 'doc-1', ['chunk-0001'])).toBe(0);
      expect(await store().count(c)).toBe(13);
      const hits = await store().search({ collection: c, vector: randomVector(next), topK: 15 });
      expect(hits.filter((h) => h.chunk.documentId === 'doc-1').map((h) => h.chunk.id)).toEqual(['chunk-0001']);
      expect(hits.filter((h) => h.chunk.documentId === 'doc-2')).toHaveLength(3);
      expect(await store().pruneDocument(c, 'doc-2', [])).toBe(3);
    });

    it('refuses bad chunks with VALIDATION_FAILED and stores none of the batch', async () => {
      const c = collectionName();
      const next = seeded(6);
      const good = chunk(c, 1, randomVector(next));
      const bad: [Chunk, string][] = [
        [{ ...chunk(c, 2, [1, 2, 3]) }, 'chunks[1].embedding'],
        [
          {
            ...chunk(
              c,
              2,
              randomVector(next).map((x, i) => (i ? x : Number.NaN)),
            ),
          },
          'chunks[1].embedding',
        ],
        [{ ...chunk(c, 2, Array(CONTRACT_DIMENSIONS).fill(0)) }, 'chunks[1].embedding'],
        [{ ...chunk(c, 2, randomVector(next)), id: '' }, 'chunks[1].id'],
        [{ ...chunk(c, 2, randomVector(next)), tokens: -1 }, 'chunks[1].tokens'],
        [{ ...chunk(c, 2, randomVector(next)), metadata: { x: { nested: 1 } as never } }, 'chunks[1].metadata.x'],
        [{ ...good }, 'chunks[1].id'],
      ];
      for (const [chunkBad, path] of bad) {
        expect(await caught(store().upsert([good, chunkBad]))).toEqual(validationFailed(path));
      }
      expect(await store().count(c)).toBe(0);
    });

    it('refuses a bad search with VALIDATION_FAILED', async () => {
      const vector = randomVector(seeded(7));
      const c = collectionName();
      expect(await caught(store().search({ collection: c, vector: [1, 2], topK: 4 }))).toEqual(
        validationFailed('vector'),
      );
      expect(await caught(store().search({ collection: c, vector, topK: 0 }))).toEqual(validationFailed('topK'));
      expect(await caught(store().search({ collection: c, vector, topK: 4, threshold: 2 }))).toEqual(
        validationFailed('threshold'),
      );
      expect(await caught(store().search({ collection: '', vector, topK: 4 }))).toEqual(validationFailed('collection'));
    });
  });
}

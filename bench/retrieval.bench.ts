/**
 * Retrieval: the knowledge lib's two vector stores on the same chunks. Prints
 * - ingestion: chunks/s for embedding (EmbeddingClient → the simulator's /v1/embeddings over HTTP,
 *   a process of its own) plus upsert, per store;
 * - search p50/p95 at each corpus size (BENCH_SIZES, default 10000,100000): pgvector with its HNSW
 *   index on an in-process PGlite, the exact scan on PostgreSQL (PARLEY_BENCH_DATABASE_URL);
 * - HNSW recall@4 against the exact scan, over the queries both ran, for each `hnsw.ef_search` of
 *   BENCH_EF_SEARCH (default 40,100,200,400): a hit counts when it is one of the exact top 4, or
 *   ties the exact 4th score (within 1e-5: the two stores round differently).
 * The corpora past the ingestion run are embedded in process with the simulator's own function
 * (the same vectors, without the HTTP). Run with `npm run bench:retrieval`; results in bench/README.md.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Pool } from 'pg';
import {
  ExactScanVectorStore,
  PgvectorVectorStore,
  type Chunk,
  type SearchHit,
  type VectorStore,
} from '../libs/knowledge/src';
import { BreakerRegistry } from '../libs/llm/src/breaker-registry';
import { EmbeddingClient } from '../libs/llm/src/embedding-client';
import { createScratchDatabase, simEmbedding } from '../libs/testing/src';
import { startSimulatorProcess } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const INGEST = Number(process.env.BENCH_INGEST ?? 5000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const EXACT_QUERIES = Number(process.env.BENCH_EXACT_QUERIES ?? 50);
const DIMENSIONS = Number(process.env.BENCH_DIMENSIONS ?? 256);
const EF_SEARCH = (process.env.BENCH_EF_SEARCH ?? '40,100,200,400').split(',').map(Number);
const TOP_K = 4;
const LOAD_BATCH = 500;

/** mulberry32: the same corpus and queries on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = seeded(42);
const VOCABULARY = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
/** A sentence of 8–20 words, drawn with a skew so that some words are common. */
const sentence = (rand: () => number) =>
  Array.from(
    { length: 8 + Math.floor(rand() * 13) },
    () => VOCABULARY[Math.floor(rand() ** 2 * VOCABULARY.length)],
  ).join(' ');

const chunkOf = (collection: string, i: number, text: string, embedding: number[]): Chunk => ({
  id: `c${i}`,
  collection,
  documentId: `d${Math.floor(i / 10)}`,
  text,
  tokens: text.split(' ').length,
  metadata: { part: i % 10 },
  embedding,
});

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function ingest(store: VectorStore, embedder: EmbeddingClient, simUrl: string): Promise<number> {
  const collection = `ingest-${store.kind}`;
  const rand = seeded(7);
  const texts = Array.from({ length: INGEST }, () => sentence(rand));
  const started = performance.now();
  for (let i = 0; i < texts.length; i += LOAD_BATCH) {
    const batch = texts.slice(i, i + LOAD_BATCH);
    const { vectors } = await embedder.embed({
      provider: { code: 'SIM', baseUrl: simUrl, apiKey: null },
      model: 'sim-embed',
      inputs: batch,
      dimensions: DIMENSIONS,
    });
    await store.upsert(batch.map((text, j) => chunkOf(collection, i + j, text, vectors[j])));
  }
  return INGEST / ((performance.now() - started) / 1000);
}

/** Loads the corpus up to `size` chunks (the same texts for every store). */
async function grow(store: VectorStore, from: number, size: number, texts: string[]): Promise<void> {
  for (let i = from; i < size; i += LOAD_BATCH) {
    const end = Math.min(size, i + LOAD_BATCH);
    const chunks: Chunk[] = [];
    for (let j = i; j < end; j++) chunks.push(chunkOf('corpus', j, texts[j], simEmbedding(texts[j], DIMENSIONS)));
    await store.upsert(chunks);
  }
}

async function timeSearches(store: VectorStore, queries: number[][]): Promise<{ ms: number[]; hits: SearchHit[][] }> {
  const ms: number[] = [];
  const hits: SearchHit[][] = [];
  for (const vector of queries) {
    const started = performance.now();
    hits.push(await store.search({ collection: 'corpus', vector, topK: TOP_K }));
    ms.push(performance.now() - started);
  }
  return { ms, hits };
}

/** The share of the exact top-K an approximate search found (a tie with the exact K-th score counts). */
function recallOf(approximate: SearchHit[][], exact: SearchHit[][]): number {
  let found = 0;
  let wanted = 0;
  exact.forEach((truth, q) => {
    wanted += truth.length;
    const ids = new Set(truth.map((h) => h.chunk.id));
    const kth = truth.at(-1)?.score ?? -2;
    found += approximate[q].filter((h) => ids.has(h.chunk.id) || h.score >= kth - 1e-5).length;
  });
  return wanted === 0 ? 1 : Math.min(1, found / wanted);
}

async function main(): Promise<void> {
  const sim = await startSimulatorProcess();
  const pglite = await PGlite.create({ extensions: { vector } });
  const db = await createScratchDatabase('bench_retrieval', ADMIN_URL);
  const pool = new Pool({ connectionString: db.url, max: 2 });
  const hnsw = new PgvectorVectorStore(pglite, DIMENSIONS);
  const exact = new ExactScanVectorStore(pool, DIMENSIONS);
  const embedder = new EmbeddingClient(new BreakerRegistry({ threshold: 5, halfOpenAfterMs: 1000 }), {
    batchSize: 64,
  });
  try {
    await hnsw.init();
    await exact.init();
    const ingestion = [
      ['pgvector (HNSW), PGlite', await ingest(hnsw, embedder, sim.url)],
      ['exact scan, PostgreSQL', await ingest(exact, embedder, sim.url)],
    ] as const;
    process.stdout.write(`\n| ingestion | chunks | chunks/s (embedding + upsert) |\n|---|---:|---:|\n`);
    for (const [name, rate] of ingestion) process.stdout.write(`| ${name} | ${INGEST} | ${rate.toFixed(0)} |\n`);

    const largest = Math.max(...SIZES);
    const texts = Array.from({ length: largest }, () => sentence(next));
    const queryRand = seeded(99);
    const queries = Array.from({ length: QUERIES }, () => simEmbedding(sentence(queryRand), DIMENSIONS));
    process.stdout.write(
      `\n| chunks | store | ef_search | queries | search p50 ms | search p95 ms | recall@${TOP_K} vs exact |\n|---:|---|---:|---:|---:|---:|---:|\n`,
    );
    let loaded = 0;
    for (const size of SIZES) {
      // A bulk load goes in without the HNSW index, which is then built once (init creates it).
      const loadStarted = performance.now();
      await pglite.query(`drop index if exists ${hnsw.table}_hnsw`);
      await grow(hnsw, loaded, size, texts);
      const hnswLoadS = (performance.now() - loadStarted) / 1000;
      const indexStarted = performance.now();
      await hnsw.init();
      const hnswIndexS = (performance.now() - indexStarted) / 1000;
      await grow(exact, loaded, size, texts);
      loaded = size;
      const slow = await timeSearches(exact, queries.slice(0, EXACT_QUERIES));
      const row = (name: string, ef: string, r: { ms: number[] }, recall: string) =>
        process.stdout.write(
          `| ${size} | ${name} | ${ef} | ${r.ms.length} | ${percentile(r.ms, 50).toFixed(2)} | ${percentile(r.ms, 95).toFixed(2)} | ${recall} |\n`,
        );
      for (const efSearch of EF_SEARCH) {
        const fast = await timeSearches(new PgvectorVectorStore(pglite, DIMENSIONS, { efSearch }), queries);
        row('pgvector (HNSW), PGlite', String(efSearch), fast, recallOf(fast.hits, slow.hits).toFixed(3));
      }
      row('exact scan, PostgreSQL', '—', slow, '1 (the reference)');
      process.stdout.write(
        `loaded ${size} chunks into PGlite/pgvector in ${hnswLoadS.toFixed(1)} s, HNSW index built in ${hnswIndexS.toFixed(1)} s\n`,
      );
    }
  } finally {
    sim.close();
    await pool.end();
    await db.drop();
    await pglite.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

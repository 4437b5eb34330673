/**
 * Retrieval: the knowledge lib's two vector stores on the same chunks. Prints
 * - ingestion: chunks/s for embedding (EmbeddingClient → the simulator's /v1/embeddings over HTTP,
 *   a process of its own) plus upsert, per store; and Parley's ingestion path itself (documents
 *   chunked by 512 tokens with 50 of overlap, embedded through Collections and upserted in
 *   batches of INGEST_BATCH_SIZE by IngestionService.storeChunks) into the exact scan on PostgreSQL;
 * - search p50/p95 at each corpus size (BENCH_SIZES, default 10000,100000): pgvector with its HNSW
 *   index on an in-process PGlite, the exact scan on PostgreSQL (PARLEY_BENCH_DATABASE_URL);
 * - HNSW recall@4 against the exact scan, over the queries both ran.
 * The corpora past the ingestion run are embedded in process with the simulator's own function
 * (the same vectors, without the HTTP). Run with `npm run bench:retrieval`; results in bench/README.md.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Pool } from 'pg';
import { loadConfig } from '../libs/config/src';
import {
  Collections,
  ExactScanVectorStore,
  IngestionService,
  PgvectorVectorStore,
  VectorStoreResolver,
  chunkText,
  type Chunk,
  type CollectionSource,
  type VectorStore,
} from '../libs/knowledge/src';
import { InProcessJobQueue } from '../libs/platform/src/queue/in-process-job-queue';
import { tokenCounter } from '../libs/prompt/src';
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

/**
 * Parley's ingestion path on documents of about 100 chunks each, until INGEST chunks: chunked
 * (CHUNK_TOKENS/CHUNK_OVERLAP defaults), embedded through Collections (EMBEDDING_BATCH_SIZE per
 * request) and upserted by IngestionService.storeChunks, INGEST_BATCH_SIZE chunks at a time.
 */
async function ingestDocuments(
  pool: Pool,
  simUrl: string,
): Promise<{ chunks: number; rate: number; storeRate: number }> {
  const config = loadConfig({ EMBEDDING_BATCH_SIZE: '64' });
  const source: CollectionSource = {
    collection: async (code) => ({
      code,
      collectionName: 'ingest-parley',
      similarityThreshold: null,
      resultCount: null,
      embeddingModel: { code: 'EMB', name: 'sim-embed', providerCode: 'SIM', inputTokenPrice: 0 },
      store: { code: 'KB', type: 'SCAN', connectionUrl: null },
    }),
  };
  const resolver = new VectorStoreResolver(source, pool);
  const embedder = new EmbeddingClient(new BreakerRegistry({ threshold: 5, halfOpenAfterMs: 1000 }), {
    batchSize: config.llm.embeddingBatchSize,
  });
  const endpoints = { endpointFor: async (code: string) => ({ code, baseUrl: simUrl, apiKey: null }) };
  const collections = new Collections(source, resolver, embedder, endpoints);
  const service = new IngestionService(pool, collections, source, new InProcessJobQueue(), config);
  const rand = seeded(11);
  const count = tokenCounter('sim-embed');
  let chunks = 0;
  let chunkMs = 0;
  const started = performance.now();
  for (let doc = 0; chunks < INGEST; doc++) {
    const paragraphs = Array.from({ length: 300 }, () =>
      Array.from({ length: 8 }, () => `${sentence(rand)}.`).join(' '),
    );
    const chunkStarted = performance.now();
    const pieces = chunkText(paragraphs.join('\n\n'), {
      chunkTokens: config.ingestion.chunkTokens,
      overlap: config.ingestion.chunkOverlap,
      count,
    });
    chunkMs += performance.now() - chunkStarted;
    const stored = await service.storeChunks('BENCH', `doc-${doc}`, `Document ${doc}`, { doc }, pieces);
    chunks += stored.chunks;
  }
  const elapsedMs = performance.now() - started;
  await resolver.close();
  return { chunks, rate: chunks / (elapsedMs / 1000), storeRate: chunks / ((elapsedMs - chunkMs) / 1000) };
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

async function timeSearches(store: VectorStore, queries: number[][]): Promise<{ ms: number[]; ids: string[][] }> {
  const ms: number[] = [];
  const ids: string[][] = [];
  for (const vector of queries) {
    const started = performance.now();
    const hits = await store.search({ collection: 'corpus', vector, topK: TOP_K });
    ms.push(performance.now() - started);
    ids.push(hits.map((h) => h.chunk.id));
  }
  return { ms, ids };
}

async function main(): Promise<void> {
  const sim = await startSimulatorProcess();
  const pglite = await PGlite.create({ extensions: { vector } });
  const db = await createScratchDatabase('bench_retrieval', ADMIN_URL);
  const pool = new Pool({ connectionString: db.url, max: 2 });
  // Dropping the database at the end ends its connections; an idle one reports it here.
  pool.on('error', () => undefined);
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
    const parley = await ingestDocuments(pool, sim.url);
    process.stdout.write(`\n| ingestion | chunks | chunks/s (embedding + upsert) |\n|---|---:|---:|\n`);
    for (const [name, rate] of ingestion) process.stdout.write(`| ${name} | ${INGEST} | ${rate.toFixed(0)} |\n`);
    process.stdout.write(
      `| Parley's ingestion path: chunking 512/50, Collections.embed, batched upsert; exact scan on PostgreSQL | ${parley.chunks} | ${parley.rate.toFixed(0)} (without the chunking, ${parley.storeRate.toFixed(0)}) |\n`,
    );

    const largest = Math.max(...SIZES);
    const texts = Array.from({ length: largest }, () => sentence(next));
    const queryRand = seeded(99);
    const queries = Array.from({ length: QUERIES }, () => simEmbedding(sentence(queryRand), DIMENSIONS));
    process.stdout.write(
      `\n| chunks | store | queries | search p50 ms | search p95 ms | recall@${TOP_K} vs exact |\n|---:|---|---:|---:|---:|---:|\n`,
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
      const fast = await timeSearches(hnsw, queries);
      const slow = await timeSearches(exact, queries.slice(0, EXACT_QUERIES));
      let found = 0;
      let wanted = 0;
      slow.ids.forEach((truth, q) => {
        wanted += truth.length;
        found += truth.filter((id) => fast.ids[q].includes(id)).length;
      });
      const recall = wanted === 0 ? 1 : found / wanted;
      const row = (name: string, r: { ms: number[] }, extra: string) =>
        process.stdout.write(
          `| ${size} | ${name} | ${r.ms.length} | ${percentile(r.ms, 50).toFixed(2)} | ${percentile(r.ms, 95).toFixed(2)} | ${extra} |\n`,
        );
      row('pgvector (HNSW), PGlite', fast, recall.toFixed(3));
      row('exact scan, PostgreSQL', slow, '1 (the reference)');
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

/**
 * Retrieval: the knowledge lib's two vector stores on the same chunks. Prints
 * - ingestion: chunks/s for embedding (EmbeddingClient → the simulator's /v1/embeddings over HTTP,
 *   a process of its own) plus upsert, per store (pgvector on PGlite as Parley runs it there, with
 *   the graph's build after it timed apart, and with pgvector's own index); and Parley's ingestion path itself (documents
 *   chunked by 512 tokens with 50 of overlap, embedded through Collections and upserted in
 *   batches of INGEST_BATCH_SIZE by IngestionService.storeChunks) into the exact scan on PostgreSQL;
 * - search p50/p95 at each corpus size (BENCH_SIZES, default 10000,100000): pgvector with its HNSW
 *   index on an in-process PGlite, the exact scan on PostgreSQL (PARLEY_BENCH_DATABASE_URL) in SQL,
 *   and the same table searched as Parley searches it, the collection ranked in process
 *   (VECTOR_CACHE_MB; one search reads it first, then each asks only for its version);
 * - for two kinds of query — most of a chunk's words reordered plus two others (a question with a
 *   true neighbour), and unrelated sentences (none: the corpus ranks by small margins) —
 *   HNSW recall@4 against the exact scan, over the queries both ran, for each `hnsw.ef_search` of
 *   BENCH_EF_SEARCH (default 40,100,200,400), in three readings: the headline counts a hit when it
 *   is one of the exact top 4 or ties the exact 4th score (within 1e-5: the two stores round
 *   differently); *ids* counts only the exact top 4's ids; *ann-b.* counts, as ann-benchmarks does,
 *   a hit whose distance is at most the exact 4th's + 1e-3;
 * - the same searches through the HNSW graphs Parley keeps in its graph process (CollectionGraphs):
 *   over the PGlite table as the embedded database runs it (VECTOR_INDEX auto), and over the exact
 *   scan's table on PostgreSQL, each graph built (then, at the next size, patched) by a first
 *   search, with the time it took and the process's RSS it added;
 * - the time to load each corpus into PGlite without the index and to build the index over it.
 * The index is built as Parley builds it, from the same settings: VECTOR_HNSW_M,
 * VECTOR_HNSW_EF_CONSTRUCTION and VECTOR_HNSW_BUILD_MEMORY_MB (README.md's configuration table),
 * in PGlites with the embedded database's EMBEDDED_SHARED_BUFFERS_MB;
 * the searches of the sweep always go through the index (VECTOR_EXACT_BELOW does not apply).
 * The corpora past the ingestion run are embedded in process with the simulator's own function
 * (the same vectors, without the HTTP).
 * - retrieval in turns: the all-in-one server in this process (fresh database, the simulator at
 *   zero latency in a process of its own), BENCH_TURNS_RAG rounds (default 200, after
 *   BENCH_RAG_WARMUP, default 20): in each, one turn of an action per store of BENCH_RAG_STORES
 *   (default exact,pgvector: the exact scan in the server's PostgreSQL, and pgvector's HNSW in an
 *   embedded PGlite that the vector store's connectionUrl points at), each collection holding
 *   BENCH_RAG_DOCUMENTS documents (default 250, four chunks each), and one turn of the same action
 *   without a collection, each on a new conversation, timed over HTTP here. The time retrieval adds
 *   is a turn's time with the collection less the embedding call's own latency (recorded in its
 *   ContextRetrieved) against the turns without: p50 against p50, p95 against p95. The server
 *   takes the VECTOR_* settings of this process's environment (VECTOR_EXACT_BELOW: whether the
 *   1,000 chunks are searched exactly or through the index).
 * Run with `npm run bench:retrieval` (BENCH_PARTS=stores or BENCH_PARTS=turns runs one part);
 * results in bench/README.md.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'pg';
import { AppModule } from '../apps/server/src/app.module';
import { CatalogService } from '../libs/catalog/src';
import { loadConfig } from '../libs/config/src';
import { EVENT_STORE, type EventStore } from '../libs/event-store/src';
import {
  Collections,
  ExactScanVectorStore,
  GRAPH_EF_CONSTRUCTION,
  GRAPH_EF_SEARCH,
  GRAPH_M,
  GraphProcess,
  IngestionService,
  PgvectorVectorStore,
  VectorStoreResolver,
  chunkText,
  type Chunk,
  type CollectionSource,
  type SearchHit,
  type VectorStore,
} from '../libs/knowledge/src';
import { createLogger } from '../libs/observability/src';
import { InProcessJobQueue } from '../libs/platform/src/queue/in-process-job-queue';
import { tokenCounter } from '../libs/prompt/src';
import { putDocuments, startEmbeddedPostgresForTest } from '../libs/testing/src';
import { createHttpApp } from '../libs/transport/src';
import { testCatalog } from '../test/support/test-catalog';
import { BreakerRegistry } from '../libs/llm/src/breaker-registry';
import { EmbeddingClient } from '../libs/llm/src/embedding-client';
import { createScratchDatabase, simEmbedding } from '../libs/testing/src';
import { benchConfig, createBenchDatabase, percentiles, startSimulatorProcess } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const INGEST = Number(process.env.BENCH_INGEST ?? 5000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const EXACT_QUERIES = Number(process.env.BENCH_EXACT_QUERIES ?? 50);
const DIMENSIONS = Number(process.env.BENCH_DIMENSIONS ?? 256);
const EF_SEARCH = (process.env.BENCH_EF_SEARCH ?? '40,100,200,400').split(',').map(Number);
const TOP_K = 4;
const LOAD_BATCH = 500;
/** This process's VECTOR_* settings, which both parts apply as Parley does. */
const VECTOR_ENV = Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('VECTOR_')));
const vectorConfig = loadConfig(VECTOR_ENV).llm;
/** The sweep's PGlites get the embedded database's shared_buffers (EMBEDDED_SHARED_BUFFERS_MB). */
const PGLITE_CONF = [
  `shared_buffers = ${loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: process.env.EMBEDDED_SHARED_BUFFERS_MB }).database.embeddedSharedBuffersMb}MB`,
];
/** The HNSW store of the sweep: the index as Parley builds it, always searched through it. */
const hnswOptions = (efSearch = vectorConfig.hnswEfSearch) => ({
  efSearch,
  m: vectorConfig.hnswM,
  efConstruction: vectorConfig.hnswEfConstruction,
  buildMemoryMb: vectorConfig.hnswBuildMemoryMb,
  exactBelow: 0,
});

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

async function ingest(
  store: VectorStore,
  embedder: EmbeddingClient,
  simUrl: string,
  collection = `ingest-${store.kind}`,
): Promise<number> {
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

/** The graph process's resident memory, from /proc (Linux), in MB. */
function graphProcessRssMb(graphs: GraphProcess): string {
  const status = graphs.pid === null ? '' : readFileSync(`/proc/${graphs.pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? (Number(kb) / 1024).toFixed(0) : '?';
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

/**
 * The share of the exact top-K an approximate search found: a hit counts when its id is one of
 * the exact top-K, or when its score is within `tie` of the exact K-th (null: ids only).
 */
function recallOf(approximate: SearchHit[][], exact: SearchHit[][], tie: number | null): number {
  let found = 0;
  let wanted = 0;
  exact.forEach((truth, q) => {
    wanted += truth.length;
    const ids = new Set(truth.map((h) => h.chunk.id));
    const kth = truth.at(-1)?.score ?? -2;
    found += approximate[q].filter((h) => ids.has(h.chunk.id) || (tie !== null && h.score >= kth - tie)).length;
  });
  return wanted === 0 ? 1 : Math.min(1, found / wanted);
}

/** The headline recall (ties within 1e-5), then by ids only, then as ann-benchmarks counts it (1e-3). */
const recalls = (approximate: SearchHit[][], exact: SearchHit[][]) =>
  [1e-5, null, 1e-3].map((tie) => recallOf(approximate, exact, tie).toFixed(3)).join(' | ');

async function stores(): Promise<void> {
  const sim = await startSimulatorProcess();
  const pglite = await PGlite.create({ extensions: { vector }, postgresqlconf: PGLITE_CONF });
  const db = await createScratchDatabase('bench_retrieval', ADMIN_URL);
  const pool = new Pool({ connectionString: db.url, max: 2 });
  // Dropping the database at the end ends its connections; an idle one reports it here.
  pool.on('error', () => undefined);
  const hnsw = new PgvectorVectorStore(pglite, DIMENSIONS, hnswOptions());
  // The HNSW graphs (Parley's graph process), over the same PGlite table and the same PostgreSQL table.
  const graphs = new GraphProcess();
  const graphOnPglite = new PgvectorVectorStore(pglite, DIMENSIONS, {
    exactBelow: 0,
    graph: { worker: graphs, megabytes: 4096 },
  });
  const graphOnPostgres = new ExactScanVectorStore(pool, DIMENSIONS, 0, { worker: graphs, megabytes: 4096, above: 0 });
  const exact = new ExactScanVectorStore(pool, DIMENSIONS);
  // The same table searched as Parley searches it: the collection kept in process (VECTOR_CACHE_MB).
  const kept = new ExactScanVectorStore(pool, DIMENSIONS, vectorConfig.vectorCacheMb);
  const embedder = new EmbeddingClient(new BreakerRegistry({ threshold: 5, halfOpenAfterMs: 1000 }), {
    batchSize: 64,
  });
  try {
    await hnsw.init();
    await exact.init();
    // Parley's own store: the index comes once the table holds VECTOR_EXACT_BELOW chunks. A PGlite
    // of its own, so that the sweep's table starts empty.
    const deferred = await PGlite.create({ extensions: { vector }, postgresqlconf: PGLITE_CONF });
    const parleyStore = new PgvectorVectorStore(deferred, DIMENSIONS, {
      ...hnswOptions(),
      exactBelow: vectorConfig.vectorExactBelow,
    });
    await parleyStore.init();
    // As Parley runs it in the embedded database (VECTOR_INDEX auto): no pgvector index, an HNSW
    // graph, built on the first search after the load.
    const graphed = await PGlite.create({ extensions: { vector }, postgresqlconf: PGLITE_CONF });
    const graphedStore = new PgvectorVectorStore(graphed, DIMENSIONS, {
      ...hnswOptions(),
      exactBelow: vectorConfig.vectorExactBelow,
      graph: { worker: graphs, megabytes: 1024 },
    });
    await graphedStore.init();
    const graphedRate = await ingest(graphedStore, embedder, sim.url);
    const graphStarted = performance.now();
    await graphedStore.search({ collection: `ingest-pgvector`, vector: simEmbedding('w1 w2', DIMENSIONS), topK: 4 });
    await graphedStore.graphs!.settled();
    const graphRate = INGEST / ((performance.now() - graphStarted) / 1000);
    await graphed.close();
    const ingestion = [
      [
        `pgvector, PGlite, as Parley runs it (VECTOR_INDEX auto: no pgvector index; the graph built after, at ${graphRate.toFixed(0)} chunks/s)`,
        graphedRate,
      ],
      ['pgvector (HNSW), PGlite, the index live (VECTOR_INDEX=pgvector)', await ingest(hnsw, embedder, sim.url)],
      [
        `pgvector, PGlite, VECTOR_INDEX=pgvector: no index below ${vectorConfig.vectorExactBelow} chunks, then built, then live`,
        await ingest(parleyStore, embedder, sim.url),
      ],
      ['exact scan, PostgreSQL', await ingest(exact, embedder, sim.url)],
    ] as const;
    await deferred.close();
    const parley = await ingestDocuments(pool, sim.url);
    process.stdout.write(`\n| ingestion | chunks | chunks/s (embedding + upsert) |\n|---|---:|---:|\n`);
    for (const [name, rate] of ingestion) process.stdout.write(`| ${name} | ${INGEST} | ${rate.toFixed(0)} |\n`);
    process.stdout.write(
      `| Parley's ingestion path: chunking 512/50, Collections.embed, batched upsert; exact scan on PostgreSQL | ${parley.chunks} | ${parley.rate.toFixed(0)} (without the chunking, ${parley.storeRate.toFixed(0)}) |\n`,
    );

    const largest = Math.max(...SIZES);
    const texts = Array.from({ length: largest }, () => sentence(next));
    const queryRand = seeded(99);
    const unrelated = Array.from({ length: QUERIES }, () => simEmbedding(sentence(queryRand), DIMENSIONS));
    process.stdout.write(
      `\nHNSW: m ${vectorConfig.hnswM}, ef_construction ${vectorConfig.hnswEfConstruction}, built with maintenance_work_mem ${vectorConfig.hnswBuildMemoryMb} MB, shared_buffers ${PGLITE_CONF[0].split(' = ')[1]}\n` +
        `| chunks | store | queries | ef_search | n | search p50 ms | search p95 ms | recall@${TOP_K} vs exact | ids | ann-b. |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n`,
    );
    let loaded = 0;
    for (const size of SIZES) {
      // A bulk load goes in without the HNSW index, which is then built once (init creates it).
      const before = loaded;
      const loadStarted = performance.now();
      await pglite.query(`drop index if exists ${hnsw.table}_hnsw`);
      await grow(hnsw, loaded, size, texts);
      const hnswLoadS = (performance.now() - loadStarted) / 1000;
      const indexStarted = performance.now();
      await hnsw.createIndex();
      const hnswIndexS = (performance.now() - indexStarted) / 1000;
      await grow(exact, loaded, size, texts);
      loaded = size;
      // Each graph built (or brought from the last size to this one) by a first search, timed.
      const graphBuilds: string[] = [];
      for (const [name, store] of [
        ['PGlite', graphOnPglite],
        ['PostgreSQL', graphOnPostgres],
      ] as const) {
        const started = performance.now();
        await store.search({ collection: 'corpus', vector: unrelated[0], topK: TOP_K });
        await store.graphs!.settled();
        graphBuilds.push(
          `graph over ${name}'s ${size} chunks (${size - before} new) ready in ${((performance.now() - started) / 1000).toFixed(1)} s, the graph process's RSS then ${graphProcessRssMb(graphs)} MB`,
        );
      }
      // Queries as a user asks them (most of a chunk's words, reordered, and two others) have a
      // true neighbour; unrelated sentences do not, and rank the whole corpus by small margins.
      const fromChunks = Array.from({ length: QUERIES }, () => {
        const words = texts[Math.floor(queryRand() * size)].split(' ').filter(() => queryRand() < 0.6);
        words.sort(() => queryRand() - 0.5);
        return simEmbedding([...words, ...sentence(queryRand).split(' ').slice(0, 2)].join(' '), DIMENSIONS);
      });
      const row = (name: string, kind: string, ef: string, r: { ms: number[] }, recall: string) =>
        process.stdout.write(
          `| ${size} | ${name} | ${kind} | ${ef} | ${r.ms.length} | ${percentile(r.ms, 50).toFixed(2)} | ${percentile(r.ms, 95).toFixed(2)} | ${recall} |\n`,
        );
      for (const [kind, queries] of [
        ['from a chunk', fromChunks],
        ['unrelated', unrelated],
      ] as const) {
        const slow = await timeSearches(exact, queries.slice(0, EXACT_QUERIES));
        await timeSearches(kept, queries.slice(0, 1));
        const inProcess = await timeSearches(kept, queries.slice(0, EXACT_QUERIES));
        for (const efSearch of EF_SEARCH) {
          const fast = await timeSearches(new PgvectorVectorStore(pglite, DIMENSIONS, hnswOptions(efSearch)), queries);
          row('pgvector (HNSW), PGlite', kind, String(efSearch), fast, recalls(fast.hits, slow.hits));
        }
        const viaPglite = await timeSearches(graphOnPglite, queries);
        row(
          "HNSW graph, Parley's graph process, over PGlite/pgvector (VECTOR_INDEX auto)",
          kind,
          String(GRAPH_EF_SEARCH),
          viaPglite,
          recalls(viaPglite.hits, slow.hits),
        );
        const viaPostgres = await timeSearches(graphOnPostgres, queries);
        row(
          "HNSW graph, Parley's graph process, over the exact scan, PostgreSQL",
          kind,
          String(GRAPH_EF_SEARCH),
          viaPostgres,
          recalls(viaPostgres.hits, slow.hits),
        );
        row('exact scan, PostgreSQL', kind, '—', slow, '1 (the reference) | 1 | 1');
        row(
          `exact scan, PostgreSQL, ranked in process (VECTOR_CACHE_MB ${vectorConfig.vectorCacheMb}; read once before)`,
          kind,
          '—',
          inProcess,
          recalls(inProcess.hits, slow.hits),
        );
      }
      process.stdout.write(
        `loaded ${size - before} chunks into PGlite/pgvector without the index in ${hnswLoadS.toFixed(1)} s, HNSW index over ${size} built in ${hnswIndexS.toFixed(1)} s: ${((size - before) / (hnswLoadS + hnswIndexS)).toFixed(0)} chunks/s (without embedding)\n` +
          `${graphBuilds.join('; ')} (m ${GRAPH_M}, ef_construction ${GRAPH_EF_CONSTRUCTION}, int8)\n`,
      );
    }
  } finally {
    sim.close();
    await graphs.close();
    await pool.end();
    await db.drop();
    await pglite.close();
  }
}

const RAG_TURNS = Number(process.env.BENCH_TURNS_RAG ?? 200);
const RAG_DOCUMENTS = Number(process.env.BENCH_RAG_DOCUMENTS ?? 250);
const WARM_UP = Number(process.env.BENCH_RAG_WARMUP ?? 20);

/** Where the turn benchmark's collection lives: the server's own PostgreSQL, or an embedded PGlite with pgvector. */
type RagStore = 'exact' | 'pgvector';
const RAG_STORES = (process.env.BENCH_RAG_STORES ?? 'exact,pgvector').split(',') as RagStore[];

/** What one turn of a collection's action recorded in its ContextRetrieved, and how long it took here. */
interface RagSample {
  ms: number;
  embedding: number;
  search: number;
  chunks: number;
}

/**
 * Turns of actions with a collection and of the same action without, in one server in this
 * process, interleaved. Each store in BENCH_RAG_STORES gets its own collection and action: the
 * exact scan in the server's PostgreSQL, and pgvector (HNSW) in an embedded PGlite reached
 * through the vector store's connectionUrl, as a deployment with a pgvector database would run.
 */
async function turns(): Promise<void> {
  const db = await createBenchDatabase();
  const sim = await startSimulatorProcess();
  const embedded = RAG_STORES.includes('pgvector') ? await startEmbeddedPostgresForTest() : null;
  const adminKey = `pk_bench_${randomBytes(16).toString('hex')}`;
  const config = benchConfig(adminKey, {
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    ...VECTOR_ENV,
  });
  const app = await createHttpApp(AppModule.forRoot(config), config, createLogger({ level: 'silent' }));
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const catalog = testCatalog(sim.url);
    const action = (code: string, documents: string[]) => ({
      code,
      description: code,
      llmModel: 'SIM-CHAT',
      llmConfiguration: 'TEST',
      llmMemoryStrategy: 'FULL',
      llmActionPrompt: 'Answer from the documents when they apply.',
      documents,
    });
    const collection = { llmSimilarityThreshold: 0.1, llmResultCount: 4 };
    await app.get(CatalogService).apply(
      {
        ...catalog,
        models: [
          ...catalog.models,
          { code: 'EMB', llmModelName: 'sim-embed', llmProvider: 'SIM', modelType: 'embedding', instanceWide: true },
        ],
        vectorStoreTypes: [{ code: 'PGV', description: 'pgvector' }],
        vectorStores: [
          { code: 'KB', description: 'Knowledge base', llmEmbeddingModel: 'EMB' },
          ...(embedded
            ? [
                {
                  code: 'KBV',
                  description: 'pgvector on PGlite',
                  llmVectorStoreType: 'PGV',
                  connectionUrl: embedded.url,
                  llmEmbeddingModel: 'EMB',
                },
              ]
            : []),
        ],
        documentCollections: [
          { code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', ...collection },
          ...(embedded ? [{ code: 'FAQV', llmVectorStore: 'KBV', collectionName: 'faq', ...collection }] : []),
        ],
        actions: [...catalog.actions, action('RAG', ['FAQ']), action('RAGV', ['FAQV']), action('NORAG', [])],
      },
      { dryRun: false },
    );
    const rand = seeded(5);
    const documents = Array.from({ length: RAG_DOCUMENTS }, (_, d) => ({
      documentId: `doc-${d}`,
      title: `Document ${d}`,
      chunks: Array.from({ length: 4 }, () => Array.from({ length: 6 }, () => sentence(rand)).join(' ')),
    }));
    const stores = RAG_STORES.map((kind) => ({
      kind,
      collection: kind === 'exact' ? 'FAQ' : 'FAQV',
      action: kind === 'exact' ? 'RAG' : 'RAGV',
    }));
    const loadS: Record<string, number> = {};
    for (const store of stores) {
      const loadStarted = performance.now();
      for (let i = 0; i < documents.length; i += 50)
        await putDocuments(app.get(Collections), store.collection, documents.slice(i, i + 50));
      loadS[store.kind] = (performance.now() - loadStarted) / 1000;
    }

    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const eventStore = app.get<EventStore>(EVENT_STORE);
    const queries = seeded(11);
    const turn = async (actionCode: string, content: string) => {
      const { conversationId } = await call('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode });
      const started = performance.now();
      const reply = await call(`/api/v1/conversations/${conversationId as string}/messages`, { content });
      const ms = performance.now() - started;
      if (reply.status !== 'CO') throw new Error(`turn ended ${String(reply.status)}`);
      return { id: conversationId as string, ms };
    };
    const sampled = async (actionCode: string, content: string): Promise<RagSample> => {
      const rag = await turn(actionCode, content);
      const events = await eventStore.readStream(`conversation-${rag.id}`);
      const retrieved = events.find((e) => e.type === 'ContextRetrieved')?.data as
        { searches: { latencyMs: number; searchMs: number; error?: string }[]; chunks: unknown[] } | undefined;
      if (!retrieved) throw new Error(`a turn of ${actionCode} recorded no ContextRetrieved`);
      const failed = retrieved.searches.find((s) => s.error);
      if (failed) throw new Error(`a search of ${actionCode} failed: ${failed.error}`);
      return {
        ms: rag.ms,
        embedding: Math.max(...retrieved.searches.map((s) => s.latencyMs)),
        search: Math.max(...retrieved.searches.map((s) => s.searchMs)),
        chunks: retrieved.chunks.length,
      };
    };
    const samples = new Map<RagStore, RagSample[]>(stores.map((s) => [s.kind, []]));
    const without: number[] = [];
    for (let i = 0; i < WARM_UP + RAG_TURNS; i++) {
      const content = documents[Math.floor(queries() * documents.length)].chunks[0].split(' ').slice(0, 12).join(' ');
      const round = [];
      for (const store of stores) round.push([store.kind, await sampled(store.action, content)] as const);
      const plain = await turn('NORAG', content);
      if (i < WARM_UP) continue;
      for (const [kind, sample] of round) samples.get(kind)!.push(sample);
      without.push(plain.ms);
    }
    const f = (n: number) => n.toFixed(2);
    const b = percentiles(without);
    let table =
      `\nretrieval in turns: ${RAG_TURNS} turns each, ${RAG_DOCUMENTS * 4} chunks a collection\n` +
      `| turns | p50 ms | p95 ms |\n|---|---:|---:|\n| without a collection | ${f(b.p50)} | ${f(b.p95)} |\n`;
    for (const store of stores) {
      const list = samples.get(store.kind)!;
      const name = store.kind === 'exact' ? 'exact scan, PostgreSQL' : 'pgvector (HNSW), PGlite';
      const a = percentiles(list.map((x) => x.ms - x.embedding));
      const c = percentiles(list.map((x) => x.ms - x.embedding - x.search));
      const e = percentiles(list.map((x) => x.embedding));
      const s = percentiles(list.map((x) => x.search));
      const kept = list.reduce((n, x) => n + x.chunks, 0) / list.length;
      table +=
        `| ${name}: with the collection, less the embedding call (loaded in ${loadS[store.kind].toFixed(1)} s, ${kept.toFixed(1)} chunks kept a turn) | ${f(a.p50)} | ${f(a.p95)} |\n` +
        `| ${name}: **added by retrieval beyond the embedding call** | **${f(a.p50 - b.p50)}** | **${f(a.p95 - b.p95)}** |\n` +
        `| ${name}: added by Parley's retrieval step beyond the store | ${f(c.p50 - b.p50)} | ${f(c.p95 - b.p95)} |\n` +
        `| ${name}: the embedding call (recorded) | ${f(e.p50)} | ${f(e.p95)} |\n` +
        `| ${name}: the vector search alone (recorded) | ${f(s.p50)} | ${f(s.p95)} |\n`;
    }
    process.stdout.write(table);
  } finally {
    await app.close();
    sim.close();
    await embedded?.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const parts = process.env.BENCH_PARTS ?? 'stores,turns';
  if (parts.includes('stores')) await stores();
  if (parts.includes('turns')) await turns();
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

import { spawn } from 'node:child_process';

/**
 * Every benchmark runs here at smoke size, so one that breaks fails the suite like any test. What
 * is asserted is that it runs to the end and prints its table — never a timing, which a shared
 * machine cannot promise.
 */
interface BenchmarkRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
}

function runBenchmark(file: string, env: Record<string, string>): Promise<BenchmarkRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', './tools/register.js', `bench/${file}`], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

/** Fails with how the benchmark ended and the end of what it printed, unless it ran to the end. */
function expectRanToEnd({ code, signal, out }: BenchmarkRun): void {
  if (code !== 0) throw new Error(`the benchmark ended with code ${code}, signal ${signal}:\n${out.slice(-2_000)}`);
}

const tableOf = (out: string) => out.split('\n').filter((line) => line.startsWith('| '));

describe('the benchmarks at smoke size', () => {
  it('bench:event-store runs every scenario and prints its table with the bare pg baseline', async () => {
    const { code, signal, out } = await runBenchmark('event-store.bench.ts', { BENCH_ROUND_MS: '40' });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/scenario.*adapter.*bare pg.*ratio/);
    const byLength = table.findIndex((line) => /events in it before/.test(line));
    expect(table.slice(0, byLength).filter((line) => /appends\/s|events\/s|reads\/s/.test(line))).toHaveLength(6);
    // Appends to streams already holding 0, 1,000 and 10,000 events, each against the new stream's.
    expect(table.slice(byLength + 1).map((line) => line.split('|')[1].trim())).toEqual(['0', '1,000', '10,000']);
  }, 120_000);

  it('bench:turn runs every scenario against the bare SDK and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('turn.bench.ts', {
      BENCH_TURNS: '2',
      BENCH_PACED_TURNS: '1',
      BENCH_STORAGE_CHARS: '200',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table.some((line) => /scenario.*bare SDK.*Parley turn/.test(line))).toBe(true);
    for (const scenario of ['plain turn, 1 concurrent', 'tool turn, 50 concurrent, paced'])
      expect(table.some((line) => line.startsWith(`| ${scenario} |`))).toBe(true);
    // The stored bytes of a streamed reply, at both rates, beside its 200 characters.
    for (const rate of ['20 tokens/s', '100 tokens/s'])
      expect(table.some((line) => line.startsWith(`| ${rate} | 200 |`))).toBe(true);
    // The closed loop beside the bare SDK and LangGraph + PostgresSaver, with the ratios and the
    // time added at one conversation; LangGraph's tokenizer never reached for the network.
    expect(table).toContainEqual(
      expect.stringMatching(
        /^\| closed loop \| turns bare \/ LangGraph \/ Parley \| turns\/s .*Parley ÷ LangGraph \| Parley ÷ bare \|.*WAL KB\/turn/,
      ),
    );
    for (const kind of ['plain', 'tool'])
      for (const size of ['1 conversation', '10 conversations', '50 conversations'])
        expect(table).toContainEqual(
          expect.stringMatching(
            new RegExp(
              `^\\| ${kind} turn, ${size} \\| \\d+ / \\d+ / \\d+ \\| \\d+ / \\d+ / \\d+ \\| [\\d.]+ \\| [\\d.]+ \\|`,
            ),
          ),
        );
    for (const kind of ['plain', 'tool'])
      expect(table).toContainEqual(
        expect.stringMatching(new RegExp(`^\\| ${kind} turn \\| -?[\\d.]+ / -?[\\d.]+ \\| -?[\\d.]+ / -?[\\d.]+ \\|$`)),
      );
    expect(out).toMatch(/LangGraph's requests off this machine \(tokenizer ranks\): none/);
  }, 240_000);

  it('bench:scale-out runs two command APIs, two workers and a projector, then the all-in-one server, and loses nothing', async () => {
    const { code, signal, out } = await runBenchmark('scale-out.bench.ts', {
      BENCH_CONVERSATIONS: '4',
      BENCH_TURNS: '8',
      BENCH_TURNS_PER_CONVERSATION: '2',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/deployment.*turns\/s.*acknowledged turns.*TurnStarted stored.*MessageRecorded stored/);
    // 4 conversations of a warm-up turn and 2 measured: 12 acknowledged, each with its events and rows.
    for (const deployment of ['2 command APIs, 2 workers, 1 projector', 'all-in-one server'])
      expect(table).toContainEqual(
        expect.stringMatching(
          new RegExp(`^\\| ${deployment} \\| 4 \\| 8 \\| \\d+ \\| [\\d. /]+ \\| 12 \\| 12 \\| 24 \\| 24 \\| 0 \\|`),
        ),
      );
    for (const name of ['command API 1', 'command API 2', 'worker 1', 'worker 2', 'projector'])
      expect(table).toContainEqual(expect.stringContaining(`| 2 command APIs, 2 workers, 1 projector | ${name} | `));
    expect(out).toMatch(/lost turns: 0 and 0/);
  }, 180_000);

  it('bench:memory samples the server over its turns, gives the second half its verdict, and prices idle conversations', async () => {
    const { code, signal, out } = await runBenchmark('memory.bench.ts', {
      BENCH_MEMORY_TURNS: '300',
      BENCH_MEMORY_CONVERSATIONS: '5',
      BENCH_MEMORY_TURNS_PER_CONVERSATION: '2',
      BENCH_MEMORY_SAMPLES: '4',
      BENCH_MEMORY_IDLE: '10,20',
      BENCH_MEMORY_SETTLE_MS: '200',
      BENCH_MEMORY_READINGS: '1',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/turns done.*conversations.*RSS MiB.*heap used MiB, after GC/);
    // A first reading before any turn, then one about every 75 turns up to the 300th.
    for (const turns of ['0', '300'])
      expect(table).toContainEqual(
        expect.stringMatching(new RegExp(`^\\| ${turns} \\| \\d+ \\| \\d+ \\| [\\d.]+ \\|`)),
      );
    expect(out).toMatch(
      /second half RSS: mean [\d.]+ MiB, max \+[\d.]+ %, min [-+][\d.]+ %, slope [-+][\d.]+ MiB per 10k turns/,
    );
    expect(table).toContainEqual(
      expect.stringMatching(/^\| idle conversations added \| cached after \| RSS MiB before → after/),
    );
    for (const [added, cached] of [
      ['10', '10'],
      ['20', '30'],
    ])
      expect(table).toContainEqual(
        expect.stringMatching(new RegExp(`^\\| ${added} \\| ${cached} \\| [\\d.]+ → [\\d.]+ \\|`)),
      );
  }, 120_000);

  it('bench:read runs the projection lag, the rebuild and the queries and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('read.bench.ts', {
      BENCH_REBUILD_EVENTS: '2000',
      BENCH_QUERIES: '100',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    for (const scenario of ['projection lag', 'projection rebuild', 'conversation by id', 'messages of a conversation'])
      expect(table.some((line) => line.startsWith(`| ${scenario}`))).toBe(true);
  }, 120_000);

  it('bench:ui loads the conversations page and a long timeline in Chromium and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('ui.bench.ts', {
      BENCH_UI_CONVERSATIONS: '200',
      BENCH_UI_EVENTS: '200',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    for (const scenario of ['conversations page', 'timeline of 200+ events', 'timeline scrolled'])
      expect(table.some((line) => line.startsWith(`| ${scenario}`))).toBe(true);
  }, 120_000);

  it('bench:llm-fetch compares the two HTTP clients and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('llm-fetch.bench.ts', { BENCH_ROUNDS: '2', BENCH_CALLS: '20' });
    expectRanToEnd({ code, signal, out });
    expect(tableOf(out).length).toBeGreaterThan(2);
  }, 120_000);

  it('bench:tools measures MCP over stdio and streamable HTTP and the HTTP tool, with one stdio process', async () => {
    const { code, signal, out } = await runBenchmark('tools.bench.ts', {
      BENCH_ROUNDS: '2',
      BENCH_CALLS: '20',
      BENCH_WARMUP: '10',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/scenario.*client.*p50 ms.*p95 ms.*calls\/s.*vs bare.*added p50 ms/);
    for (const scenario of ['stdio', 'streamable HTTP', 'HTTP tool']) {
      expect(table.some((line) => line.startsWith(`| ${scenario} | bare`))).toBe(true);
      expect(table.some((line) => line.startsWith(`| ${scenario} | Parley`))).toBe(true);
    }
    expect(out).toMatch(/started over stdio by Parley's pool: 1 for/);
    expect(out).toMatch(/processes left after close: 0/);
  }, 120_000);
  it('bench:generate measures generate against the bare SDKs, plain and with an MCP tool step, and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('generate.bench.ts', { BENCH_CALLS: '4', BENCH_WARMUP: '2' });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/scenario.*bare SDK.*generate.*added/);
    for (const scenario of ['generate, plain, 1 concurrent', 'generate, one MCP tool step, 50 concurrent'])
      expect(table.some((line) => line.startsWith(`| ${scenario} |`))).toBe(true);
  }, 120_000);

  it('bench:retrieval measures ingestion, HNSW and exact-scan search and recall, and turns with retrieval, and prints its tables', async () => {
    const { code, signal, out } = await runBenchmark('retrieval.bench.ts', {
      BENCH_TURNS_RAG: '4',
      BENCH_RAG_WARMUP: '1',
      BENCH_RAG_DOCUMENTS: '10',
      BENCH_SIZES: '200,400',
      BENCH_INGEST: '100',
      BENCH_QUERIES: '10',
      BENCH_EXACT_QUERIES: '5',
      BENCH_DIMENSIONS: '64',
    });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table).toContainEqual(expect.stringMatching(/^\| ingestion \| chunks \| chunks\/s/));
    expect(table).toContainEqual(
      expect.stringMatching(/^\| pgvector \(HNSW\), PGlite, the index live \(VECTOR_INDEX=pgvector\) \| 100 \| \d+/),
    );
    expect(table).toContainEqual(
      expect.stringMatching(
        /^\| pgvector, PGlite, as Parley runs it \(VECTOR_INDEX auto: .* at \d+ chunks\/s\) \| 100 \| \d+/,
      ),
    );
    expect(table).toContainEqual(
      expect.stringMatching(/^\| pgvector, PGlite, VECTOR_INDEX=pgvector: .* \| 100 \| \d+/),
    );
    expect(table).toContainEqual(expect.stringMatching(/^\| exact scan, PostgreSQL \| 100 \| \d+/));
    for (const size of ['200', '400'])
      for (const kind of ['from a chunk', 'unrelated']) {
        for (const ef of ['40', '100', '200', '400'])
          expect(table).toContainEqual(
            expect.stringMatching(
              new RegExp(
                `^\\| ${size} \\| pgvector \\(HNSW\\), PGlite \\| ${kind} \\| ${ef} \\| 10 \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\|$`,
              ),
            ),
          );
        expect(table).toContainEqual(
          expect.stringMatching(new RegExp(`^\\| ${size} \\| exact scan, PostgreSQL \\| ${kind} \\| — \\| 5 \\|`)),
        );
        for (const graph of ['over PGlite/pgvector \\(VECTOR_INDEX auto\\)', 'over the exact scan, PostgreSQL'])
          expect(table).toContainEqual(
            expect.stringMatching(
              new RegExp(
                `^\\| ${size} \\| HNSW graph, Parley's graph process, ${graph} \\| ${kind} \\| 512 \\| 10 \\| [\\d.]+ \\| [\\d.]+ \\| 1\\.000 \\|`,
              ),
            ),
          );
      }
    for (const store of ['exact scan, PostgreSQL', 'pgvector \\(HNSW\\), PGlite']) {
      expect(table).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^\\| ${store}: \\*\\*added by retrieval beyond the embedding call\\*\\* \\| \\*\\*-?[\\d.]+\\*\\* \\|`,
          ),
        ),
      );
      expect(table).toContainEqual(
        expect.stringMatching(new RegExp(`^\\| ${store}: the vector search alone \\(recorded\\) \\| [\\d.]+ \\|`)),
      );
    }
  }, 180_000);

  it('bench:rpc compares a JSON-RPC batch of 20 queries with 20 single requests on both doors and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('rpc.bench.ts', { BENCH_ROUNDS: '5', BENCH_WARMUP: '2' });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/door.*p50 ms.*p95 ms.*queries\/s.*p50 ÷ batch p50/);
    for (const door of ['HTTP', 'NATS']) {
      expect(table).toContainEqual(
        expect.stringMatching(
          new RegExp(`^\\| ${door} \\| batch of 20 in one request \\| [\\d.]+ \\| [\\d.]+ \\| [\\d,]+ \\| 1\\.00 \\|$`),
        ),
      );
      expect(table).toContainEqual(
        expect.stringMatching(new RegExp(`^\\| ${door} \\| 20 single requests, one after another \\|`)),
      );
    }
    expect(table).toContainEqual(expect.stringMatching(/^\| HTTP \| 20 plain GETs, all at once \|/));
  }, 120_000);

  it('bench:mcp times a query as an MCP tools/call beside the same query over HTTP and prints its table', async () => {
    const { code, signal, out } = await runBenchmark('mcp.bench.ts', { BENCH_ROUNDS: '5', BENCH_WARMUP: '2' });
    expectRanToEnd({ code, signal, out });
    const table = tableOf(out);
    expect(table[0]).toMatch(/the same query as.*p50 ms.*p95 ms.*queries\/s.*p50 ÷ HTTP p50/);
    expect(table).toContainEqual(
      expect.stringMatching(/^\| HTTP GET \/api\/v1\/conversations\/\{id\} \| [\d.]+ \| [\d.]+ \| [\d,]+ \| 1\.00 \|$/),
    );
    expect(table).toContainEqual(
      expect.stringMatching(
        /^\| MCP tools\/call findConversation on \/mcp \| [\d.]+ \| [\d.]+ \| [\d,]+ \| [\d.]+ \|$/,
      ),
    );
  }, 120_000);
});

/**
 * The `fetch` under the openai SDK: Parley's undici one (libs/llm/src/undici-fetch.ts) beside the
 * platform's, the SDK's default (the baseline); and with Parley's fetch, the stream read as
 * Parley's adapter reads it (libs/llm/src/sse-chunks.ts) instead of through the SDK's iterator.
 * The same streamed chat call to the simulator (zero
 * latency, a process of its own), one at a time, in alternating rounds so both see the same
 * machine. Prints the CPU this process spends per call and the wall time per call, medians of
 * the rounds. Run with `npm run bench:llm-fetch`; results are recorded in bench/README.md.
 */
import OpenAI from 'openai';
import { Agent } from 'undici';
import { sseChunks } from '../libs/llm/src/sse-chunks';
import { bodyBytes, undiciFetch } from '../libs/llm/src/undici-fetch';
import { startSimulatorProcess } from './turn-bench-support';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);

async function main(): Promise<void> {
  const sim = await startSimulatorProcess();
  const agent = new Agent();
  const platform = new OpenAI({ baseURL: sim.url, apiKey: 'bench', maxRetries: 0 });
  const undici = new OpenAI({ baseURL: sim.url, apiKey: 'bench', maxRetries: 0, fetch: undiciFetch(agent) });
  const params = {
    model: 'sim-chat',
    messages: [{ role: 'user' as const, content: 'Hello there, how are you today?' }],
    stream: true as const,
    stream_options: { include_usage: true },
  };
  type Chunk = { choices?: { delta?: { content?: string | null } }[] };
  const check = (text: string) => {
    if (!text) throw new Error('the simulator sent no reply');
  };
  /** The SDK's own iterator over the stream. */
  const sdkStream = (client: OpenAI) => async () => {
    let text = '';
    for await (const chunk of await client.chat.completions.create(params))
      text += chunk.choices[0]?.delta?.content ?? '';
    check(text);
  };
  /** The stream read as OpenAiCompatibleAdapter reads it. */
  const parleyStream = (client: OpenAI) => async () => {
    const response = await client.chat.completions.create(params).asResponse();
    let text = '';
    for await (const chunk of sseChunks(bodyBytes(response)!, response.headers))
      text += (chunk as Chunk).choices?.[0]?.delta?.content ?? '';
    check(text);
  };
  const clients: Record<string, () => Promise<void>> = {
    'platform fetch (SDK default)': sdkStream(platform),
    'undici request (Parley), SDK stream': sdkStream(undici),
    "undici request, Parley's SSE reader (as Parley runs)": parleyStream(undici),
  };
  const call = (run: () => Promise<void>) => run();
  try {
    for (const client of Object.values(clients)) for (let i = 0; i < 200; i++) await call(client);
    const samples = new Map<string, { cpu: number[]; wall: number[] }>();
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, client] of Object.entries(clients)) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        for (let i = 0; i < CALLS; i++) await call(client);
        const used = process.cpuUsage(cpu);
        const entry = samples.get(name) ?? { cpu: [], wall: [] };
        entry.cpu.push((used.user + used.system) / 1000 / CALLS);
        entry.wall.push((performance.now() - started) / CALLS);
        samples.set(name, entry);
      }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const [baseline] = [...samples.values()].map((s) => median(s.cpu));
    process.stdout.write(`\n| fetch | calls | CPU ms/call | vs baseline | wall ms/call |\n|---|---:|---:|---:|---:|\n`);
    for (const [name, s] of samples)
      process.stdout.write(
        `| ${name} | ${ROUNDS * CALLS} | ${median(s.cpu).toFixed(3)} | ${(median(s.cpu) / baseline).toFixed(2)} | ${median(s.wall).toFixed(3)} |\n`,
      );
  } finally {
    sim.close();
    await agent.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

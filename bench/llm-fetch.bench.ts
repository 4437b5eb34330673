/**
 * The `fetch` under the openai SDK: Parley's undici one (libs/llm/src/undici-fetch.ts) beside the
 * platform's, the SDK's default (the baseline). The same streamed chat call to the simulator (zero
 * latency, a process of its own), one at a time, in alternating rounds so both see the same
 * machine. Prints the CPU this process spends per call and the wall time per call, medians of
 * the rounds. Run with `npm run bench:llm-fetch`; results are recorded in bench/README.md.
 */
import OpenAI from 'openai';
import { Agent } from 'undici';
import { undiciFetch } from '../libs/llm/src/undici-fetch';
import { startSimulatorProcess } from './turn-bench-support';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);

async function main(): Promise<void> {
  const sim = await startSimulatorProcess();
  const agent = new Agent();
  const clients: Record<string, OpenAI> = {
    'platform fetch (SDK default)': new OpenAI({ baseURL: sim.url, apiKey: 'bench', maxRetries: 0 }),
    'undici request (Parley)': new OpenAI({
      baseURL: sim.url,
      apiKey: 'bench',
      maxRetries: 0,
      fetch: undiciFetch(agent),
    }),
  };
  const call = async (client: OpenAI) => {
    const stream = await client.chat.completions.create({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'Hello there, how are you today?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    if (!text) throw new Error('the simulator sent no reply');
  };
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

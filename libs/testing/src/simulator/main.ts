import { parseArgs } from 'node:util';
import { demoScript } from './demo-script';
import { startSimulator } from './simulator';
import { HABITS, type Habit } from './simulator.types';

/**
 * Runs the simulator with the demo script:
 *   node -r ./tools/register.js libs/testing/src/simulator/main.ts --port 4010 [--latency 20] [--habit vllm]
 * `--latency 0` streams with no artificial delay (benchmarks).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      latency: { type: 'string', default: '20' },
      habit: { type: 'string', default: 'openai' },
    },
  });
  const habit = values.habit as Habit;
  if (!HABITS.includes(habit)) throw new Error(`--habit must be one of ${HABITS.join(', ')}`);
  const simulator = await startSimulator({
    port: Number(values.port),
    host: values.host,
    latencyMs: Number(values.latency),
    habit,
    rules: demoScript,
  });
  process.stdout.write(`OpenAI-compatible simulator listening on ${simulator.url} (habit ${habit})\n`);
  const shutdown = () => void simulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});

/**
 * The simulator in a process of its own for the turn benchmark, as a real model endpoint would
 * be: its CPU does not share the server's event loop. Prints its URL, then answers the parent's
 * IPC questions: `{ requestsFrom: n }` -> the bodies of the chat requests received from the n-th on;
 * `{ durations: ids }` -> its own time on each of those requests (by `x-request-id`), in ms.
 */
import { demoScript, startSimulator, type RecordedRequest } from '../libs/testing/src';
import type { SimRule } from '../libs/testing/src/simulator/simulator.types';

/**
 * With BENCH_SIM_ECHO=1 (the generate benchmark), a message starting `echo` asks for the MCP proxy's
 * `echo` tool once, then answers from its result.
 */
const ECHO_TOOL = 'mcp-proxy__echo';
const echoRules: SimRule[] = [
  { when: { toolResult: { name: ECHO_TOOL } }, reply: { text: 'The echo came back.' } },
  { when: { lastUserMessage: /^echo/ }, reply: { toolCalls: [{ name: ECHO_TOOL, arguments: { message: 'bench' } }] } },
];

async function main(): Promise<void> {
  const rules = process.env.BENCH_SIM_ECHO ? [...echoRules, ...demoScript] : demoScript;
  const sim = await startSimulator({ rules, latencyMs: 0 });
  const byId = new Map<string, RecordedRequest>();
  process.on('message', (message: { requestsFrom?: number; durations?: string[] }) => {
    if (message.durations) {
      for (const r of sim.requests.slice(byId.size)) byId.set(r.id, r);
      return process.send!({ durations: message.durations.map((id) => byId.get(id)?.durationMs ?? Number.NaN) });
    }
    if (message.requestsFrom === undefined) return;
    const bodies = sim.requests
      .slice(message.requestsFrom)
      .filter((r) => r.path.endsWith('/chat/completions'))
      .map((r) => r.body);
    process.send!({ count: sim.requests.length, bodies });
  });
  process.once('disconnect', () => void sim.close().then(() => process.exit(0)));
  process.send!({ url: sim.url });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

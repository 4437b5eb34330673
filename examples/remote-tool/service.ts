/**
 * A remote tool service for Parley, written with the plain `nats` client: it reads the
 * SkillInvocationEvents Parley publishes on its subject (JetStream, a durable consumer of
 * Parley's `<PREFIX>_REMOTE_TOOLS` stream) and answers each with a SkillCompletionEvent on the
 * invocation's `replyTo`. Invocations published while it is down are delivered when it starts.
 *
 *   node -r ./tools/register.js examples/remote-tool/service.ts nats://127.0.0.1:4222 parley weather.forecast
 *
 * The tool: `{city}` -> a made-up forecast; the city "Atlantis" is answered with an error.
 */
import { AckPolicy, connect, type JsMsg } from 'nats';

interface SkillInvocationEvent {
  correlationId: string;
  skillName: string;
  arguments: Record<string, unknown>;
  replyTo: string;
  conversationId: string;
  toolCallId: string;
  deadline: string;
}

const [url = 'nats://127.0.0.1:4222', prefix = 'parley', subject = 'weather.forecast'] = process.argv.slice(2);
const stream = `${prefix.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}_REMOTE_TOOLS`;
const durable = `svc-${subject.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/** What the tool computes: a result, or an error for the model to read. */
function answer(call: SkillInvocationEvent): { result: unknown } | { error: { message: string; code: string } } {
  const city = String(call.arguments.city ?? '');
  if (city === 'Atlantis') return { error: { message: `No forecast for ${city}.`, code: 'UNKNOWN_CITY' } };
  const degrees = 10 + ([...city].reduce((n, ch) => n + ch.charCodeAt(0), 0) % 15);
  return { result: { city, forecast: `sunny, ${degrees} °C` } };
}

async function main(): Promise<void> {
  const nc = await connect({ servers: url });
  const jsm = await nc.jetstreamManager();
  // Parley creates its stream on the tool's first call: wait for it.
  for (;;) {
    const info = await jsm.streams.info(stream).catch(() => null);
    if (info?.config.subjects?.includes(subject)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!(await jsm.consumers.info(stream, durable).catch(() => null)))
    await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: subject });
  const js = nc.jetstream();
  const messages = await (await js.consumers.get(stream, durable)).consume();
  console.log(`remote tool service ready on ${subject}`);
  const handle = async (m: JsMsg) => {
    const call = m.json<SkillInvocationEvent>();
    // Past its deadline Parley has failed the call as a timeout and ignores any answer.
    if (Date.parse(call.deadline) > Date.now())
      await js.publish(call.replyTo, JSON.stringify({ correlationId: call.correlationId, ...answer(call) }));
    m.ack();
  };
  const stop = async () => {
    await messages.close();
    await nc.drain();
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  for await (const m of messages) await handle(m).catch((err: unknown) => console.error(String(err)));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

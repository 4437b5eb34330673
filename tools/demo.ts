/**
 * `npm run demo`: a conversation with Parley in the terminal. Starts the simulator (or uses the
 * real model named by OPENAI_API_KEY / PARLEY_DEMO_BASE_URL / PARLEY_DEMO_MODEL), a database
 * and the server in this process, applies examples/catalog.yaml, and plays a streamed reply,
 * an ORDER_STATUS tool call, a question the demo answers, and the usage and cost. It talks to
 * Parley as another service would, through @parley/client over HTTP.
 */
import 'reflect-metadata';
import { httpTransport, ParleyClient, type TurnReply, type TurnResult } from '@parley/client';
import { startDemoStack } from './demo-stack';
import { follow, type Frame } from './demo-stream';

const MESSAGES = [
  'Hello! What can you help me with?',
  'Where is my order A-1001?',
  'Please open a support ticket: my parcel arrived damaged.',
];
const SETTLING = new Set(['ConversationCompleted', 'QuestionAsked', 'ConversationFailed', 'ToolCallApprovalRequested']);
/** The events the demo prints a line for. */
const PRINTED = new Set([
  'ToolCallStarted',
  'ToolCallCompleted',
  'ToolCallFailed',
  'ModelCallFailed',
  'ModelCallCompleted',
]);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const say = (s: string) => process.stdout.write(`${s}\n`);
const money = (n: number) => `$${n.toFixed(6)}`;

/** The fields of the deltas and events the demo prints (each has some of them). */
interface Shown {
  text?: string;
  name?: string;
  arguments?: string;
  output?: string;
  durationMs?: number;
  code?: string;
  message?: string;
  kind?: string;
  turnNo?: number;
  callNo?: number;
  finishReason?: string;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  latencyMs?: number;
}

/** Prints the stream as it arrives and hands out the frames that end (or pause) a turn. */
class Printer {
  readonly total = { calls: 0, input: 0, output: 0, cost: 0 };
  private streaming = false;
  private settled: Frame[] = [];
  private waiting: ((f: Frame) => void) | null = null;

  /** Model calls (`turnNo:callNo`) whose ModelCallStarted has come; their text prints at once. */
  private readonly started = new Set<string>();
  /** Text of model calls whose ModelCallStarted has not come yet. */
  private readonly held = new Map<string, string[]>();

  private write(text: string): void {
    if (!this.streaming) process.stdout.write('parley> ');
    this.streaming = true;
    process.stdout.write(text);
  }

  onFrame = (f: Frame): void => {
    const d = (f.event === 'delta' ? f.data : f.data.data) as Shown;
    if (f.event === 'delta' && d.text) {
      // Live text can outrun the stored events before it (a tool's call and result are stored
      // with the next append): it waits until its model call's ModelCallStarted has come.
      const call = `${d.turnNo}:${d.callNo}`;
      if (this.started.has(call)) this.write(d.text);
      else this.held.set(call, [...(this.held.get(call) ?? []), d.text]);
      return;
    }
    if (f.event === 'ModelCallStarted') {
      const call = `${d.turnNo}:${d.callNo}`;
      this.started.add(call);
      for (const text of this.held.get(call) ?? []) this.write(text);
      this.held.delete(call);
      return;
    }
    // The streamed reply stays on its line until something else is printed; the stored events
    // that arrive meanwhile (ModelCallStarted, the ChunksReceived batches) print nothing.
    if (this.streaming && (PRINTED.has(f.event) || SETTLING.has(f.event))) {
      process.stdout.write('\n');
      this.streaming = false;
    }
    if (f.event === 'ToolCallStarted') say(`  tool call  ${d.name}(${d.arguments})`);
    if (f.event === 'ToolCallCompleted') say(`  tool result ${d.name} in ${d.durationMs} ms: ${d.output}`);
    if (f.event === 'ToolCallFailed') say(`  tool failed ${d.name}: ${d.code} ${d.message}`);
    if (f.event === 'ModelCallFailed') say(`  model call failed (${d.kind}): ${d.message}`);
    if (f.event === 'ModelCallCompleted') {
      Object.assign(this.total, {
        calls: this.total.calls + 1,
        input: this.total.input + d.inputTokens,
        output: this.total.output + d.outputTokens,
        cost: this.total.cost + d.cost,
      });
      say(
        dim(
          `  model call ${d.callNo}: ${d.finishReason}, ${d.inputTokens} in / ${d.outputTokens} out tokens, ${d.latencyMs} ms`,
        ),
      );
    }
    if (!SETTLING.has(f.event)) return;
    if (this.waiting) this.waiting(f);
    else this.settled.push(f);
    this.waiting = null;
  };

  /** The next frame that ends or pauses a turn, so the transcript is printed before the reply's summary. */
  next(): Promise<Frame> {
    const f = this.settled.shift();
    return f ? Promise.resolve(f) : new Promise((resolve) => (this.waiting = resolve));
  }
}

/** A turn's reply; a turn that outlived the wait is the demo's failure (it waits up to MAX_WAIT_MS). */
function ended(result: TurnResult): TurnReply {
  if (!result.done) throw new Error(`the turn of ${result.conversationId} outlived the wait`);
  return result;
}

/** One turn: the command, the streamed transcript, then its outcome; a question is answered and the turn goes on. */
async function turn(parley: ParleyClient, printer: Printer, id: string, content: string): Promise<boolean> {
  say(`\nyou> ${content}`);
  const wait = { wait: true, timeoutMs: 120_000 };
  let reply = ended(await parley.conversations.send(id, { content }, wait));
  for (;;) {
    await printer.next();
    const question = reply.pendingQuestion;
    if (!question) break;
    const answers: Record<string, string> = {};
    for (const q of question.questions) {
      answers[q.key] = q.options?.at(-1) ?? 'It is urgent, please handle it today.';
      say(`parley asks: ${q.question}${q.options ? ` [${q.options.join(' / ')}]` : ''}`);
      say(`you answer> ${answers[q.key]}`);
    }
    reply = ended(await parley.conversations.answer(id, answers, wait));
  }
  const { inputTokens, outputTokens, estimatedCost } = reply.usage;
  say(dim(`  turn: ${reply.status}, ${inputTokens} in / ${outputTokens} out tokens, cost ${money(estimatedCost)}`));
  if (reply.status !== 'CO') say(`  the turn did not complete: ${JSON.stringify(reply.error ?? reply)}`);
  return reply.status === 'CO';
}

async function main(): Promise<number> {
  say('Starting Parley for the demo…');
  const stack = await startDemoStack();
  const stopStream = new AbortController();
  try {
    say(
      `model: ${stack.modelLabel}\ndatabase: ${stack.databaseLabel}\nParley: ${stack.url} (examples/catalog.yaml applied)`,
    );
    const parley = new ParleyClient(httpTransport({ url: stack.url, apiKey: stack.adminKey }));
    const started = await parley.conversations.start({ agentCode: 'HELPDESK', actionCode: 'ANSWER' });
    const id = started.conversationId;
    const printer = new Printer();
    const via = await follow(stack, parley, id, printer.onFrame, stopStream.signal);
    say(
      `conversation ${id} (agent HELPDESK, action ANSWER); following it ${via === 'sse' ? 'over GET …/stream' : 'in-process (no SSE route mounted)'}`,
    );
    let ok = true;
    for (const message of MESSAGES) ok = (await turn(parley, printer, id, message)) && ok;
    const { calls, input, output, cost } = printer.total;
    say(`\n${calls} model calls, ${input} input + ${output} output tokens, estimated cost ${money(cost)}`);
    return ok ? 0 : 1;
  } finally {
    stopStream.abort();
    await stack.stop();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);

/**
 * The turn benchmark's peer in a process of its own: LangGraph.js's `createReactAgent` with
 * `PostgresSaver` (its tables in a database of its own on the same PostgreSQL, set up once at
 * start) and LangChain's `ChatOpenAI` against the same simulator as Parley, streaming. Each
 * conversation is a `thread_id`; its turns run one after another, and a conversation of `kind`
 * `tool` asks for the order status, which the simulator's demo script answers through the
 * `ORDER_STATUS` tool, as it does for Parley's ANSWER action. The agent runs in this process as
 * a library runs in its caller's, so the closed loop that drives it runs here too, and this
 * process's CPU is the peer's. Answers the parent's IPC requests (`PeerRequest`).
 *
 * No network: LangChain counts a streamed call's tokens with tiktoken ranks it would fetch from
 * the web; they are counted here with Parley's local tokenizer (js-tiktoken's bundled ranks), and
 * `fetch` refuses any host but loopback, so a missed call fails instead of hanging.
 */
import { ChatOpenAI, ChatOpenAICompletions } from '@langchain/openai';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { MessageContent } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { OrderStatusTool } from '../../libs/tools/src/builtin/order-status.tool';
import { countTokens } from '../../libs/prompt/src/token-count';

/* eslint-disable @typescript-eslint/no-require-imports -- subpath exports the tsconfig's node10 resolution cannot type */
const { createReactAgent } = require('@langchain/langgraph/prebuilt') as {
  createReactAgent(params: {
    llm: ChatOpenAI;
    tools: StructuredToolInterface[];
    checkpointSaver: PostgresSaver;
    prompt: string;
  }): { invoke(input: unknown, config: unknown): Promise<{ messages: { content: unknown }[] }> };
};
const { tool } = require('@langchain/core/tools') as {
  tool(
    run: (args: Record<string, unknown>) => string,
    fields: { name: string; description: string; schema: Record<string, unknown> },
  ): StructuredToolInterface;
};
/* eslint-enable @typescript-eslint/no-require-imports */

export type PeerRequest =
  | {
      kind: 'turns';
      /** One list of thread ids per concurrent loop. */
      lanes: string[][];
      content: string;
      turnsPerConversation: number;
    }
  | { kind: 'offline' };

export interface PeerReply {
  id: number;
  error?: string;
  /** Sent before the final reply: the warm-up is over and the measured turns begin. */
  measuring?: boolean;
  /** Milliseconds of each measured turn. */
  times?: number[];
  /** CPU milliseconds this process spent on the measured turns. */
  cpuMs?: number;
  /** Requests `fetch` refused (not to loopback). */
  refused?: string[];
}

const refused: string[] = [];
const platformFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    refused.push(url.href);
    return Promise.reject(new Error(`the benchmark's peer has no network: ${url.href}`));
  }
  return platformFetch(input, init);
};

/**
 * Token counts without the network: the same tokenizer Parley counts with. `ChatOpenAI` runs its
 * calls through this inner model, which estimates a streamed call's usage with `getNumTokens`.
 */
class LocalTokenCompletions extends ChatOpenAICompletions {
  override getNumTokens(content: MessageContent): Promise<number> {
    const text =
      typeof content === 'string'
        ? content
        : content.map((part) => (typeof part === 'string' ? part : 'text' in part ? String(part.text) : '')).join('');
    return Promise.resolve(countTokens(text, this.model));
  }
}

const orderStatus = new OrderStatusTool();
const ORDER_STATUS = tool((args) => JSON.stringify(orderStatus.execute(args)), {
  name: 'ORDER_STATUS',
  description: 'Looks up the delivery status of an order.',
  schema: {
    type: 'object',
    properties: { orderId: { type: 'string', minLength: 1, description: 'The order number, e.g. A-1001' } },
    required: ['orderId'],
    additionalProperties: false,
  },
});

async function main(): Promise<void> {
  const simulatorUrl = process.env.PEER_SIMULATOR_URL!;
  const checkpointer = PostgresSaver.fromConnString(process.env.PEER_DATABASE_URL!);
  await checkpointer.setup();
  const fields = {
    model: 'sim-chat',
    apiKey: 'sk-bench',
    configuration: { baseURL: simulatorUrl },
    streaming: true,
    temperature: 0,
    maxTokens: 256,
    maxRetries: 0,
  };
  const llm = new ChatOpenAI({ ...fields, completions: new LocalTokenCompletions(fields) });
  // The same system prompt Parley composes for the ANSWER action, near enough in size.
  const agent = createReactAgent({
    llm,
    tools: [ORDER_STATUS],
    checkpointSaver: checkpointer,
    prompt: "You are ACME's support assistant.\nYou answer customer questions.\nAnswer briefly.",
  });
  const turn = (threadId: string, content: string) =>
    agent.invoke({ messages: [{ role: 'user', content }] }, { configurable: { thread_id: threadId } });

  const handle = async (request: PeerRequest, measuring: () => void): Promise<Omit<PeerReply, 'id'>> => {
    if (request.kind === 'offline') return { refused };
    const { lanes, content, turnsPerConversation } = request;
    // Warm-up, as the client process does for Parley: one turn per conversation.
    await Promise.all(lanes.flat().map((id) => turn(id, content)));
    measuring();
    const cpu = process.cpuUsage();
    const times: number[] = [];
    await Promise.all(
      lanes.map(async (lane) => {
        for (const id of lane)
          for (let t = 0; t < turnsPerConversation; t++) {
            const started = performance.now();
            const { messages } = await turn(id, content);
            if (!messages.at(-1)?.content) throw new Error(`thread ${id}: no reply`);
            times.push(performance.now() - started);
          }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { times, cpuMs: (used.user + used.system) / 1000, refused };
  };

  process.on('message', (message: PeerRequest & { id: number }) => {
    handle(message, () => process.send!({ id: message.id, measuring: true })).then(
      (reply) => process.send!({ id: message.id, ...reply }),
      (err: unknown) => process.send!({ id: message.id, error: (err as Error).stack ?? String(err) }),
    );
  });
  process.once('disconnect', () => void checkpointer.end().then(() => process.exit(0)));
  process.send!({ id: 0 });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

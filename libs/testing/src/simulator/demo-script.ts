import { currentToolResults, lastUserMessage } from './rules';
import type { SimRule } from './simulator.types';

// The function names the model sees for examples/catalog.yaml: the ORDER_STATUS tool and
// the built-in question tool of an action with askUserQuestion.
const ORDER_TOOL = 'ORDER_STATUS';
const QUESTION_TOOL = 'AskUserQuestion';

const resultOf = (request: Parameters<typeof currentToolResults>[0], tool: string) =>
  currentToolResults(request).find((r) => r.name === tool)?.content ?? '';

/** An order number as the catalog's ORDER_QUERY schema writes it (`A-1001`), or bare digits. */
const orderIdIn = (text: string) => /\b[A-Z]+-\d+\b|\d+/i.exec(text)?.[0] ?? '42';

/** The reply a model would write from the tool's result; the raw result when it is not the expected JSON. */
function describeOrder(result: string): string {
  try {
    const { orderId, status, eta } = JSON.parse(result) as Record<string, unknown>;
    if (orderId && status && eta) return `Your order ${orderId} has ${status}; it should arrive on ${eta}.`;
  } catch {
    // not JSON: quote it as it came
  }
  return `Here is what I found about your order: ${result}`;
}

/** `priority: high` from the answers Parley sends back (`{"answers":{…}}`, or the bare map). */
function describeAnswers(result: string): string {
  try {
    const parsed = JSON.parse(result) as { answers?: Record<string, unknown> } & Record<string, unknown>;
    const answers = parsed.answers ?? parsed;
    return Object.entries(answers)
      .map(([key, value]) => `${key}: ${String(value)}`)
      .join(', ');
  } catch {
    return result;
  }
}

/**
 * The script the demo and the benchmarks run against: an order lookup through a tool, a
 * ticket that asks the user a question first, and a streamed echo for anything else.
 */
export const demoScript: SimRule[] = [
  {
    name: 'answer-with-order-status',
    when: { toolResult: { name: ORDER_TOOL } },
    reply: (request) => ({ text: describeOrder(resultOf(request, ORDER_TOOL)) }),
  },
  {
    name: 'confirm-ticket',
    when: { toolResult: { name: QUESTION_TOOL } },
    reply: (request) => ({
      text: `Thank you. I have opened your ticket (${describeAnswers(resultOf(request, QUESTION_TOOL))}).`,
    }),
  },
  {
    name: 'look-up-order',
    when: { lastUserMessage: /order/i, noToolResult: true },
    reply: (request) => ({
      toolCalls: [{ name: ORDER_TOOL, arguments: { orderId: orderIdIn(lastUserMessage(request)) } }],
    }),
  },
  {
    name: 'ask-ticket-priority',
    when: { lastUserMessage: /ticket/i, noToolResult: true },
    reply: {
      toolCalls: [
        {
          name: QUESTION_TOOL,
          arguments: { questions: [{ key: 'priority', question: 'How urgent is it?', options: ['low', 'high'] }] },
        },
      ],
    },
  },
  {
    name: 'chat',
    reply: (request) => ({
      text: `Hello! You said: "${lastUserMessage(request)}". I am the Parley simulator, streaming this reply token by token.`,
    }),
  },
];

import { currentToolResults, lastUserMessage } from './rules';
import type { SimRule } from './simulator.types';

const resultOf = (request: Parameters<typeof currentToolResults>[0], tool: string) =>
  currentToolResults(request).find((r) => r.name === tool)?.content ?? '';

/**
 * The script the demo and the benchmarks run against: an order lookup through a tool, a
 * ticket that asks the user a question first, and a streamed echo for anything else.
 */
export const demoScript: SimRule[] = [
  {
    name: 'answer-with-order-status',
    when: { toolResult: { name: 'get_order_status' } },
    reply: (request) => ({ text: `Here is what I found about your order: ${resultOf(request, 'get_order_status')}` }),
  },
  {
    name: 'confirm-ticket',
    when: { toolResult: { name: 'AskUserQuestion' } },
    reply: (request) => ({
      text: `Thank you. I have opened your ticket with this answer: ${resultOf(request, 'AskUserQuestion')}`,
    }),
  },
  {
    name: 'look-up-order',
    when: { lastUserMessage: /order/i, noToolResult: true },
    reply: (request) => ({
      toolCalls: [
        { name: 'get_order_status', arguments: { orderId: /\d+/.exec(lastUserMessage(request))?.[0] ?? '42' } },
      ],
    }),
  },
  {
    name: 'ask-ticket-priority',
    when: { lastUserMessage: /ticket/i, noToolResult: true },
    reply: {
      toolCalls: [
        {
          name: 'AskUserQuestion',
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

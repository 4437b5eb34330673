import type { Simulator } from '@parley/testing';
import type { LlmMessage, LlmRequest, LlmStreamEvent, LlmToolSpec, ProviderEndpoint } from './llm.port';

export const providerFor = (sim: Simulator, code = 'SIM'): ProviderEndpoint => ({
  code,
  baseUrl: sim.url,
  apiKey: 'sk-test',
});

export const ORDER_TOOL: LlmToolSpec = {
  name: 'get_order_status',
  description: 'Looks up an order.',
  parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

export function requestFor(sim: Simulator, text: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  const messages: LlmMessage[] = [
    { role: 'system', content: 'You are a test assistant.' },
    { role: 'user', content: text },
  ];
  return { provider: providerFor(sim), model: 'sim-chat', messages, tools: [ORDER_TOOL], options: {}, ...extra };
}

/** Everything one stream yielded, folded the way a caller would. */
export async function collect(events: AsyncIterable<LlmStreamEvent>) {
  const all: LlmStreamEvent[] = [];
  for await (const event of events) all.push(event);
  const join = (type: 'text' | 'reasoning') => all.flatMap((e) => (e.type === type ? [e.delta] : [])).join('');
  return {
    all,
    text: join('text'),
    reasoning: join('reasoning'),
    toolCalls: all.flatMap((e) => (e.type === 'tool_call' ? [e.call] : [])),
    finish: all.find((e) => e.type === 'finish'),
  };
}

/** Runs `fn` and returns what it threw. */
export async function failureOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

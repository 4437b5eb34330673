import { getEncoding } from 'js-tiktoken';
import { startSimulator, type Simulator, type UsagePlacement } from '@parley/testing';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { collect, requestFor } from './llm.spec-helpers';

describe('usage reported by the adapter', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();
  const o200k = getEncoding('o200k_base');
  const tokens = (text: string) => o200k.encode(text).length;

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it.each<UsagePlacement>(['final', 'every', 'finish'])(
    "takes the provider's usage when it comes in the %s placement",
    async (usage) => {
      sim.script([{ reply: { text: 'Counted by the provider.', usage, tokens: { prompt: 40, completion: 9 } } }]);
      const result = await collect(adapter.stream(requestFor(sim, 'count')));
      expect(result.finish).toMatchObject({ usage: { inputTokens: 40, outputTokens: 9, estimated: false } });
    },
  );

  it('counts with the tokenizer and marks the usage estimated when the provider sends none', async () => {
    const reply = 'No usage came with this reply, so Parley counts it.';
    sim.script([{ reply: { text: reply, usage: 'none' } }]);
    const request = { ...requestFor(sim, 'How many tokens?'), tools: [] };
    request.messages = [{ role: 'user', content: 'How many tokens?' }];
    const result = await collect(adapter.stream(request));
    // Three framing tokens per message and three priming the reply, as OpenAI documents.
    const input = 3 + (3 + tokens('user') + tokens('How many tokens?'));
    expect(result.finish).toMatchObject({
      usage: { inputTokens: input, outputTokens: tokens(reply), estimated: true },
    });
  });

  it('counts tool-call arguments and reasoning as output when estimating', async () => {
    sim.script([
      {
        reply: {
          habit: 'deepseek',
          usage: 'none',
          reasoning: 'Need the order.',
          toolCalls: [{ name: 'get_order_status', arguments: { orderId: '77' } }],
        },
      },
    ]);
    const result = await collect(adapter.stream(requestFor(sim, 'order 77')));
    const output = tokens('Need the order.') + tokens('get_order_status') + tokens('{"orderId":"77"}');
    expect(result.finish).toMatchObject({ usage: { outputTokens: output, estimated: true } });
  });
});

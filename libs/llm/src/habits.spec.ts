import { HABITS, startSimulator, type Habit, type Simulator } from '@parley/testing';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { collect, requestFor } from './llm.spec-helpers';

/** Habits whose servers stream reasoning on a channel of its own or inside <think> tags. */
const REASONING_HABITS: Habit[] = ['vllm', 'ollama', 'deepseek', 'groq', 'lmstudio', 'llamacpp'];

describe('OpenAiCompatibleAdapter against the streaming habits of real servers', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it.each(HABITS)('%s: same text, reasoning kept apart, each tool call once and whole, usage read', async (habit) => {
    sim.script([
      {
        reply: {
          habit,
          reasoning: 'The user wants two orders; look both up.',
          text: 'Let me look up both orders for you.',
          toolCalls: [
            { name: 'get_order_status', arguments: { orderId: '1001', include: ['items', 'shipping'] } },
            { name: 'get_order_status', arguments: { orderId: '1002' } },
          ],
          tokens: { prompt: 31, completion: 17 },
        },
      },
    ]);
    const result = await collect(adapter.stream(requestFor(sim, 'Where are orders 1001 and 1002?')));
    expect(result.text).toBe('Let me look up both orders for you.');
    expect(result.reasoning).toBe(REASONING_HABITS.includes(habit) ? 'The user wants two orders; look both up.' : '');
    expect(result.toolCalls).toEqual([
      { id: 'call_1_0', name: 'get_order_status', arguments: '{"orderId":"1001","include":["items","shipping"]}' },
      { id: 'call_1_1', name: 'get_order_status', arguments: '{"orderId":"1002"}' },
    ]);
    expect(result.finish).toEqual({
      type: 'finish',
      finishReason: 'TC',
      usage: { inputTokens: 31, outputTokens: 17, estimated: false },
      responseModel: 'sim-chat',
    });
  });

  it.each(HABITS)('%s: a plain text reply finishes with ST', async (habit) => {
    sim.script([{ reply: { habit, text: 'Just words.' } }]);
    const result = await collect(adapter.stream(requestFor(sim, 'hi')));
    expect(result.text).toBe('Just words.');
    expect(result.toolCalls).toEqual([]);
    expect(result.finish).toMatchObject({ finishReason: 'ST' });
  });
});

import { streamChunks } from './chunks';
import type { ReplyPlan } from './reply-plan';
import { tokenize } from './habits';
import type { Habit } from './simulator.types';

const plan = (habit: Habit, extra: Partial<ReplyPlan> = {}): ReplyPlan => ({
  id: 'chatcmpl-1',
  model: 'sim-chat',
  created: 0,
  text: 'Hi there.',
  reasoning: 'Think first.',
  toolCalls: [
    { id: 'a', name: 'f', arguments: '{"x":1}' },
    { id: 'b', name: 'g', arguments: '{"y":2}' },
  ],
  finishReason: 'tool_calls',
  tokens: { prompt: 10, completion: 5 },
  includeUsage: true,
  habit,
  ...extra,
});

type Chunk = {
  choices: {
    delta?: Record<string, unknown> & { tool_calls?: Record<string, unknown>[] };
    finish_reason: string | null;
  }[];
  usage?: unknown;
  x_groq?: { usage: unknown };
};
const chunksOf = (p: ReplyPlan) => streamChunks(p) as Chunk[];
const toolDeltas = (chunks: Chunk[]) => chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta?.tool_calls ?? []));

describe('simulated streaming habits', () => {
  it('tokenizes text into short pieces that join back to the text', () => {
    const text = '  Hello,   wonderful world!\n\n';
    expect(tokenize(text).join('')).toBe(text);
    expect(tokenize(text).every((piece) => piece.trim().length <= 4)).toBe(true);
  });

  it('openai: indexed deltas and a final usage chunk with empty choices only when asked', () => {
    const chunks = chunksOf(plan('openai'));
    expect(toolDeltas(chunks).every((d) => typeof d.index === 'number')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } });
    expect(chunksOf(plan('openai', { includeUsage: false })).some((c) => c.usage)).toBe(false);
  });

  it('ollama: think tags in content, whole calls without index, stop as the finish reason', () => {
    const chunks = chunksOf(plan('ollama'));
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(content).toBe('<think>Think first.</think>\n\nHi there.');
    expect(toolDeltas(chunks)).toHaveLength(2);
    expect(toolDeltas(chunks).some((d) => 'index' in d)).toBe(false);
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe('stop');
  });

  it('mistral: every call at index 0 in the finish chunk', () => {
    const finish = chunksOf(plan('mistral')).at(-1)!;
    expect(finish.choices[0].finish_reason).toBe('tool_calls');
    expect(finish.choices[0].delta?.tool_calls?.map((d) => [d.index, d.id])).toEqual([
      [0, 'a'],
      [0, 'b'],
    ]);
  });

  it('azure: a first chunk with empty choices and a last one without a delta', () => {
    const chunks = chunksOf(plan('azure', { includeUsage: false }));
    expect(chunks[0].choices).toEqual([]);
    expect(chunks.at(-1)?.choices[0]).not.toHaveProperty('delta');
  });

  it('groq: usage under x_groq; vllm: usage on every chunk; llamacpp: arguments repeated at the end', () => {
    expect(chunksOf(plan('groq')).at(-1)?.x_groq?.usage).toMatchObject({ completion_tokens: 5 });
    expect(chunksOf(plan('vllm')).every((c) => c.usage)).toBe(true);
    const repeated = chunksOf(plan('llamacpp')).at(-1)?.choices[0].delta?.tool_calls;
    expect(repeated).toEqual([{ function: { arguments: '{"y":2}' } }]);
  });
});

import { getEncoding } from 'js-tiktoken';
import { countPromptTokens, countTokens, encodingFor } from './token-counter';

describe('token counter', () => {
  it('uses cl100k_base for the GPT-4 and GPT-3.5 family and o200k_base otherwise', () => {
    expect(encodingFor('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingFor('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingFor('o3-mini')).toBe('o200k_base');
    expect(encodingFor('llama-3.1-8b')).toBe('o200k_base');
  });

  it("counts text exactly as js-tiktoken's encoding does", () => {
    const text = 'Parley streams models through any OpenAI-compatible API.';
    expect(countTokens('gpt-4', text)).toBe(getEncoding('cl100k_base').encode(text).length);
    expect(countTokens('gpt-4o', text)).toBe(getEncoding('o200k_base').encode(text).length);
    expect(countTokens('gpt-4o', '')).toBe(0);
  });

  it('counts tool calls, tool results and tool definitions in the prompt', () => {
    const bare = countPromptTokens('gpt-4o', [{ role: 'user', content: 'hi' }]);
    const withTools = countPromptTokens(
      'gpt-4o',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'done' },
      ],
      [{ name: 'f', description: 'does f', parameters: { type: 'object' } }],
    );
    expect(withTools).toBeGreaterThan(bare + 10);
  });
});

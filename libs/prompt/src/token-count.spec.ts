import { countMessageTokens, countTokens, encodingNameFor } from './token-count';

describe('token counting', () => {
  it('chooses the encoding by model name and falls back to o200k_base', () => {
    expect(encodingNameFor('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingNameFor('gpt-4')).toBe('cl100k_base');
    expect(encodingNameFor('sim-chat')).toBe('o200k_base');
  });

  it('counts with a real tokenizer, not by characters', () => {
    expect(countTokens('hello world', 'gpt-4o')).toBe(2);
    expect(countTokens('', 'gpt-4o')).toBe(0);
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    expect(countTokens(long, 'gpt-4o')).toBeLessThan(long.length / 3);
  });

  it('adds the chat framing per message and counts tool calls and images', () => {
    const plain = countMessageTokens([{ role: 'user', content: 'hello world' }], 'gpt-4o');
    expect(plain).toBe(3 + 3 + countTokens('user', 'gpt-4o') + 2);
    const withCall = countMessageTokens(
      [
        { role: 'user', content: 'hello world' },
        { role: 'assistant', content: null, toolCalls: [{ name: 'lookup', arguments: '{"id":1}' }] },
      ],
      'gpt-4o',
    );
    expect(withCall).toBeGreaterThan(plain + 3);
    const withImage = countMessageTokens(
      [{ role: 'user', content: [{ type: 'image_url', url: 'http://x/y.png' }] }],
      'gpt-4o',
    );
    expect(withImage).toBe(3 + 3 + countTokens('user', 'gpt-4o') + 85);
  });
});

import { getEncoding } from 'js-tiktoken';
import { countMessageTokens, countPromptTokens, countTokens, encodingNameFor, tokenCounter } from './token-count';

describe('token counting', () => {
  it('chooses the encoding by model name and falls back to o200k_base', () => {
    expect(encodingNameFor('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingNameFor('gpt-4')).toBe('cl100k_base');
    expect(encodingNameFor('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingNameFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingNameFor('sim-chat')).toBe('o200k_base');
    expect(encodingNameFor('llama-3.1-8b')).toBe('o200k_base');
    expect(encodingNameFor('sim-chat')).toBe('o200k_base');
  });

  it("counts text exactly as js-tiktoken's encoding does", () => {
    const text = 'Parley streams models through any OpenAI-compatible API.';
    expect(countTokens(text, 'gpt-4')).toBe(getEncoding('cl100k_base').encode(text).length);
    expect(countTokens(text, 'gpt-4o')).toBe(getEncoding('o200k_base').encode(text).length);
  });

  it('counts piece by remembered piece exactly as the encoder counts the whole text, and takes special-token text as text', () => {
    const texts = [
      'Refunds are paid within 14 days.\n\nThe office in Lisbon opens at nine!',
      'naïve café — 東京 🚀 x'.repeat(20),
      '    indented\tcode();\r\n  return {a: 1};',
      Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}`).join(' '),
    ];
    for (const [model, encoding] of [
      ['gpt-4o', 'o200k_base'],
      ['gpt-4', 'cl100k_base'],
      ['sim-embed', 'o200k_base'],
    ] as const) {
      const encoder = getEncoding(encoding);
      const count = tokenCounter(model);
      for (const text of texts) {
        const exact = encoder.encode(text).length;
        expect(count(text)).toBe(exact);
        expect(count(text)).toBe(exact); // the second time from remembered pieces
        expect(countTokens(text, model)).toBe(exact);
      }
    }
    // A user may write a special token's text: it is counted as the text it is, never thrown on.
    expect(countTokens('end <|endoftext|> here', 'gpt-4o')).toBe(
      getEncoding('o200k_base').encode('end <|endoftext|> here', [], []).length,
    );
    expect(tokenCounter('gpt-4o')('end <|endoftext|> here')).toBeGreaterThan(5);
  });

  it('counts tool calls, tool results and tool definitions in the prompt', () => {
    const bare = countPromptTokens([{ role: 'user', content: 'hi' }], [], 'gpt-4o');
    const tools = [{ name: 'f', description: 'does f', parameters: { type: 'object' } }];
    const withTools = countPromptTokens(
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, toolCalls: [{ name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'done' },
      ],
      tools,
      'gpt-4o',
    );
    expect(withTools).toBeGreaterThan(bare + 10);
    expect(countPromptTokens([{ role: 'user', content: 'hi' }], tools, 'gpt-4o')).toBe(
      bare + countTokens(JSON.stringify(tools), 'gpt-4o'),
    );
  });

  it('counts each set of tool definitions as sent, per encoding, however often it comes again', () => {
    const hi = [{ role: 'user', content: 'hi' }];
    const small = [{ name: 'f', description: 'does f', parameters: { type: 'object' } }];
    const large = [...small, { name: 'g', description: 'does g with many more words than f', parameters: {} }];
    for (let round = 0; round < 2; round++) {
      for (const [tools, model] of [
        [small, 'gpt-4o'],
        [large, 'gpt-4o'],
        [large, 'gpt-4'],
      ] as const) {
        expect(countPromptTokens(hi, tools, model)).toBe(
          countPromptTokens(hi, [], model) + countTokens(JSON.stringify(tools), model),
        );
      }
    }
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

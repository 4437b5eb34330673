import { readTextReply, toolCallOf } from './text-tool-reply';
import { TextToolStream } from './text-tool-stream';

const call = (name: string, args: string) => ({ id: expect.stringMatching(/^call_/), name, arguments: args });

describe('readTextReply', () => {
  it('reads a whole reply that is a call', () => {
    expect(readTextReply(' {"tool_name": "lookup", "arguments": {"word": "ox"}}\n', false)).toEqual({
      content: '',
      calls: [call('lookup', '{"word":"ox"}')],
    });
  });

  it('keeps the text after a leading call as the reply’s text', () => {
    const reply = readTextReply('{"tool_name": "lookup", "arguments": {"w": "}"}} I will wait.', false);
    expect(reply).toEqual({ content: 'I will wait.', calls: [call('lookup', '{"w":"}"}')] });
  });

  it('reads fenced json and unlabelled blocks as calls, and keeps the prose around them', () => {
    const text = 'Let me look.\n```json\n{"tool_name": "a", "arguments": {}}\n```\nand\n```\n{"tool_name": "b"}\n```';
    expect(readTextReply(text, false)).toEqual({
      content: 'Let me look.\nand',
      calls: [call('a', '{}'), call('b', '{}')],
    });
  });

  it('leaves prose, JSON in the middle of prose, other languages’ fences and objects without tool_name as text', () => {
    for (const text of [
      'Plain answer.',
      'Send {"tool_name": "x", "arguments": {}} to call.',
      'Code:\n```python\n{"tool_name": "x"}\n```',
      '```json\n{"answer": 42}\n```',
      '{"name": "ox"}',
    ]) {
      expect(readTextReply(text, false)).toEqual({ content: text, calls: [] });
    }
  });

  it('turns a call it cannot read into a call whose arguments the turn’s check refuses', () => {
    expect(readTextReply('{"tool_name": "lookup", "arguments": {"word": ', false)).toEqual({
      content: '',
      calls: [call('lookup', '{"tool_name": "lookup", "arguments": {"word": ')],
    });
    expect(toolCallOf('{"tool_name": 7, "arguments": {}}')).toEqual(call('7', '{"tool_name": 7, "arguments": {}}'));
    expect(toolCallOf('{"tool_name": "a", "arguments": "{\\"x\\":1}"}')).toEqual(call('a', '{"x":1}'));
  });

  it('unwraps a lone {"answer": …} only when asked to', () => {
    expect(readTextReply('{"answer": "Forty-two."}', true)).toEqual({ content: 'Forty-two.', calls: [] });
    expect(readTextReply('{"answer": "Forty-two."}', false)).toEqual({
      content: '{"answer": "Forty-two."}',
      calls: [],
    });
    expect(readTextReply('{"answer": "x", "source": "y"}', true).content).toBe('{"answer": "x", "source": "y"}');
  });
});

describe('TextToolStream', () => {
  const run = (deltas: string[], unwrap = false) => {
    const stream = new TextToolStream(unwrap);
    const shown = deltas.map((d) => stream.push(d));
    return { shown, ...stream.end() };
  };

  it('shows nothing of a reply that starts with a call, and hands over the call at the end', () => {
    const { shown, rest, calls } = run(['  ', '{"tool_', 'name": "a", ', '"arguments": {}}']);
    expect(shown.join('')).toBe('');
    expect(rest).toBe('');
    expect(calls).toEqual([call('a', '{}')]);
  });

  it('streams prose up to a fence that may open a call, and holds the rest', () => {
    const { shown, rest, calls } = run(['Let me', ' look.\n`', '``json\n{"tool_name": "a"}', '\n```\n']);
    expect(shown).toEqual(['Let me', ' look.', '', '']);
    expect(rest).toBe('');
    expect(calls).toEqual([call('a', '{}')]);
  });

  it('lets a fenced block through once it closes without a call', () => {
    const { shown, rest, calls } = run(['Example:\n```json\n{"a": 1}\n', '```\nDone', '.']);
    expect(shown).toEqual(['Example:', '\n```json\n{"a": 1}\n```\nDone', '.']);
    expect(rest).toBe('');
    expect(calls).toEqual([]);
  });

  it('gives the whole text at the end of a reply that started with an object but called nothing', () => {
    expect(run(['{"answer": ', '"Yes."}'], true)).toEqual({ shown: ['', ''], rest: 'Yes.', calls: [] });
    expect(run(['{"name": "ox"}'])).toEqual({ shown: [''], rest: '{"name": "ox"}', calls: [] });
  });

  it('shows, then hands over, exactly the text the whole reply reads as, however the reply is cut', () => {
    const replies = [
      'Let me look.\n```json\n{"tool_name": "a", "arguments": {"x": "```"}}\n```\nThen more.',
      'Code:\n```python\nprint("```")\n```\n    ```json\nnot a fence: indented four\n',
      'Example:\n```json\n{"a": 1}\n```\nand ``inline`` ticks\n```\n{"tool_name": "b"}',
      '  {"tool_name": "a", "arguments": {}} trailing words',
      'Plain answer with a ` and ``.\n',
    ];
    for (const text of replies) {
      const whole = readTextReply(text, false);
      for (const size of [1, 2, 3, 5, 8, 13, 1000]) {
        const deltas = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
        const { shown, rest, calls } = run(deltas);
        expect(shown.join('') + rest).toBe(whole.content);
        expect(calls.map((c) => [c.name, c.arguments])).toEqual(whole.calls.map((c) => [c.name, c.arguments]));
      }
    }
  });
});

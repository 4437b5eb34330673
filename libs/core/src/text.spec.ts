import { MAX_INPUT_DEPTH, unstorableTextProblems, withStorableText } from './text';

describe('unstorableTextProblems', () => {
  it('names every string and key that cannot be stored, in document order', () => {
    expect(
      unstorableTextProblems({
        content: 'a\u0000b',
        answers: { why: '\ud800', 'k\u0000': 'ok' },
        list: ['fine', '\udc00'],
      }),
    ).toEqual([
      { path: 'content', message: 'NUL characters (\\u0000) are not accepted' },
      { path: 'answers.why', message: 'unpaired UTF-16 surrogates are not accepted' },
      { path: 'answers.k\u0000', message: 'the key NUL characters (\\u0000) are not accepted' },
      { path: 'list.1', message: 'unpaired UTF-16 surrogates are not accepted' },
    ]);
    expect(unstorableTextProblems({ a: [1, { b: 'fine' }] })).toEqual([]);
  });

  it('refuses input nested twenty thousand levels deep instead of overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(20_000)}1${']'.repeat(20_000)}`) as unknown;
    const problems = unstorableTextProblems({ commandId: deep });
    expect(problems).toEqual([
      { path: `commandId${'.0'.repeat(MAX_INPUT_DEPTH - 1)}`, message: `nested deeper than ${MAX_INPUT_DEPTH} levels` },
    ]);
  });
});

describe('withStorableText', () => {
  it('replaces NULs and unpaired surrogates in strings and keys, copying only what changed', () => {
    const untouched = { model: 'sim', options: { temperature: 0.2 } };
    const value = { text: 'a\u0000b', 'k\ud800': 1, list: ['fine', '\udc00'], untouched };
    const stored = withStorableText(value);
    expect(stored).toEqual({
      text: 'a\ufffdb',
      'k\ufffd': 1,
      list: ['fine', '\ufffd'],
      untouched: { model: 'sim', options: { temperature: 0.2 } },
    });
    expect(stored.untouched).toBe(untouched);
    expect(value.text).toBe('a\u0000b');
    expect(value.list[1]).toBe('\udc00');
  });

  it('gives back the very value when there is nothing to replace', () => {
    const value = { type: 'RecordModelReply', data: { reply: { text: 'Hello 👋', toolCalls: [{ name: 'x' }] } } };
    expect(withStorableText(value)).toBe(value);
  });
});

import { MAX_INPUT_DEPTH, unstorableTextProblems } from './text';

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

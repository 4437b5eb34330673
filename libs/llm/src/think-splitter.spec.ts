import { ThinkSplitter, type SplitPiece } from './think-splitter';

function split(chunks: string[]) {
  const splitter = new ThinkSplitter();
  const pieces: SplitPiece[] = [...chunks.flatMap((c) => splitter.push(c)), ...splitter.flush()];
  const join = (type: SplitPiece['type']) =>
    pieces
      .filter((p) => p.type === type)
      .map((p) => p.delta)
      .join('');
  return { text: join('text'), reasoning: join('reasoning') };
}

describe('ThinkSplitter', () => {
  it('keeps a think block as reasoning and the rest as the reply', () => {
    expect(split(['<think>weigh it</think>\n\nThe answer.'])).toEqual({ reasoning: 'weigh it', text: 'The answer.' });
  });

  it('recognises tags split across chunks', () => {
    expect(split(['<th', 'ink>wei', 'gh it</t', 'hink', '>\n', '\nThe ', 'answer.'])).toEqual({
      reasoning: 'weigh it',
      text: 'The answer.',
    });
  });

  it('passes content without tags through untouched, angle brackets included', () => {
    expect(split(['a < b', ' and <b>bold</b> <', 'thin'])).toEqual({
      reasoning: '',
      text: 'a < b and <b>bold</b> <thin',
    });
  });

  it('treats an unclosed think block as reasoning to the end', () => {
    expect(split(['<think>still going'])).toEqual({ reasoning: 'still going', text: '' });
  });
});

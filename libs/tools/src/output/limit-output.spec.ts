import { limitOutput } from './limit-output';

describe('limitOutput', () => {
  it('keeps output within the limit unchanged', () => {
    expect(limitOutput('hello', 5)).toEqual({ output: 'hello', truncated: false });
  });

  it('cuts longer output and names the full size', () => {
    expect(limitOutput('abcdefghij', 4)).toEqual({ output: 'abcd\n…[truncated: 10 bytes total]', truncated: true });
  });

  it('never cuts inside a multi-byte character', () => {
    // "é" is two bytes: a cut at 2 would split the second one.
    const { output } = limitOutput('aéé', 4);
    expect(output.startsWith('aé\n')).toBe(true);
    expect(output).not.toContain('\uFFFD');
  });

  it('reports the size of a body that was only partly read', () => {
    expect(limitOutput(Buffer.from('abcdef'), 4, 1_000).output).toBe('abcd\n…[truncated: 1000 bytes total]');
  });
});

import { ToolCallAssembler, type ToolCallDelta } from './tool-call-assembler';

const assemble = (...chunks: ToolCallDelta[][]) => {
  const assembler = new ToolCallAssembler();
  for (const chunk of chunks) assembler.push(chunk);
  return assembler.calls();
};

describe('ToolCallAssembler', () => {
  it('joins argument fragments keyed by index', () => {
    const calls = assemble(
      [{ index: 0, id: 'a', function: { name: 'lookup', arguments: '' } }],
      [{ index: 1, id: 'b', function: { name: 'notify', arguments: '{"to"' } }],
      [{ index: 0, function: { arguments: '{"q":' } }],
      [{ index: 1, function: { arguments: ':"x"}' } }],
      [{ index: 0, function: { arguments: '1}' } }],
    );
    expect(calls).toEqual([
      { id: 'a', name: 'lookup', arguments: '{"q":1}' },
      { id: 'b', name: 'notify', arguments: '{"to":"x"}' },
    ]);
  });

  it('continues the latest call when deltas carry no index', () => {
    const calls = assemble(
      [{ id: 'a', function: { name: 'lookup', arguments: '{"q":' } }],
      [{ function: { arguments: '1}' } }],
      [{ id: 'b', function: { name: 'lookup', arguments: '' } }],
      [{ function: { arguments: '{"q":2}' } }],
    );
    expect(calls.map((c) => [c.id, c.arguments])).toEqual([
      ['a', '{"q":1}'],
      ['b', '{"q":2}'],
    ]);
  });

  it('tells apart calls that all come at index 0 by their new id', () => {
    const calls = assemble(
      [{ index: 0, id: 'a', function: { name: 'lookup', arguments: '{"q":1}' } }],
      [{ index: 0, id: 'b', function: { name: 'lookup', arguments: '{"q":' } }],
      [{ index: 0, function: { arguments: '2}' } }],
    );
    expect(calls.map((c) => [c.id, c.arguments])).toEqual([
      ['a', '{"q":1}'],
      ['b', '{"q":2}'],
    ]);
  });

  it('drops a trailing empty or repeated arguments delta once the arguments are whole', () => {
    const calls = assemble(
      [{ index: 0, id: 'a', function: { name: 'lookup', arguments: '{"q":' } }],
      [{ index: 0, function: { arguments: '1}' } }],
      [{ index: 0, function: { arguments: '' } }],
      [{ function: { arguments: '{"q":1}' } }],
    );
    expect(calls).toEqual([{ id: 'a', name: 'lookup', arguments: '{"q":1}' }]);
  });

  it('opens a new call for a second whole call with no id and no index', () => {
    const calls = assemble([
      { function: { name: 'lookup', arguments: '{"q":1}' } },
      { function: { name: 'lookup', arguments: '{"q":2}' } },
    ]);
    expect(calls.map((c) => c.arguments)).toEqual(['{"q":1}', '{"q":2}']);
    expect(calls[0].id).not.toEqual(calls[1].id);
  });

  it('passes malformed arguments through raw', () => {
    const calls = assemble(
      [{ index: 0, id: 'a', function: { name: 'lookup', arguments: '{"q": 1,' } }],
      [{ index: 0, function: { arguments: ' oops' } }],
    );
    expect(calls[0].arguments).toBe('{"q": 1, oops');
  });

  it('leaves out a call that never got a name', () => {
    expect(assemble([{ index: 0, function: { arguments: '{}' } }])).toEqual([]);
  });
});

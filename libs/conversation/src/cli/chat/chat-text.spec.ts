import { choose } from './chat-session';
import { parseFrame } from '@parley/client';

describe('parley chat, its parsing', () => {
  it('reads an SSE frame: event, id and JSON data; a keep-alive comment is no frame', () => {
    expect(parseFrame('id: 4\nevent: ChunksReceived\ndata: {"text":"Hi"}')).toEqual({
      event: 'ChunksReceived',
      id: '4',
      data: { text: 'Hi' },
    });
    expect(parseFrame('event: delta\ndata: {"text":"a"}')).toEqual({ event: 'delta', data: { text: 'a' } });
    expect(parseFrame(': keep-alive')).toBeNull();
    expect(parseFrame('data: not json')).toEqual({ event: 'message', data: 'not json' });
  });

  it('chooses by number or by code, in any case, and nothing else', () => {
    const codes = ['CHAT', 'ANSWER'];
    expect(choose('2', codes)).toBe('ANSWER');
    expect(choose(' chat ', codes)).toBe('CHAT');
    expect(choose('3', codes)).toBeNull();
    expect(choose('0', codes)).toBeNull();
    expect(choose('TICKET', codes)).toBeNull();
  });
});

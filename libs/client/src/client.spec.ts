import { ParleyError } from './errors';
import { FrameQueue } from './queue';
import { parseFrame, sseFrames } from './sse';

describe('@parley/client, its parts', () => {
  it('reads SSE frames split anywhere across chunks, CRLF included; keep-alives are no frames', async () => {
    const text =
      ': keep-alive\r\n\r\nid: 0\nevent: ConversationStarted\ndata: {"revision":0}\n\nevent: delta\ndata: {"text":"Hi"}\n\n';
    const bytes = new TextEncoder().encode(text);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.slice(i, i + 7);
    }
    const frames = [];
    for await (const frame of sseFrames(chunks())) frames.push(frame);
    expect(frames).toEqual([
      { event: 'ConversationStarted', id: '0', data: { revision: 0 } },
      { event: 'delta', data: { text: 'Hi' } },
    ]);
    expect(parseFrame('data: not json')).toEqual({ event: 'message', data: 'not json' });
  });

  it("turns Parley's error envelope into a ParleyError with its code, status and problems", () => {
    const err = ParleyError.fromBody({
      error: { code: 'VALIDATION_FAILED', message: 'bad', details: { problems: [{ path: 'content', message: 'x' }] } },
    });
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name: 'ParleyError', code: 'VALIDATION_FAILED', status: 400 });
    expect(err.problems.map((p) => p.path)).toEqual(['content']);
    expect(ParleyError.fromBody({ error: { code: 'CONVERSATION_BUSY', message: 'busy' } }).status).toBe(409);
    // Not Parley's envelope (a proxy's page): a stand-in with the status it came with.
    expect(ParleyError.fromBody('<html>', 502)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 502 });
  });

  it("bounds a stream's queue: a reader that stops reading fails the stream instead of growing memory", async () => {
    const queue = new FrameQueue<number>(3);
    for (let i = 0; i < 5; i++) queue.push(i);
    const read: number[] = [];
    await expect(
      (async () => {
        for await (const n of queue.drain()) read.push(n);
      })(),
    ).rejects.toThrow('3 frames behind');
    expect(read).toEqual([0, 1, 2]);
  });
});

import { APIError } from 'openai';
import { sseChunks } from './sse-chunks';

const encoder = new TextEncoder();
const headers = new Headers({ 'x-request-id': 'req-1' });

/** A body sending `parts` as they are, one chunk each; `read` counts the chunks taken from it. */
function bodyOf(parts: (string | Uint8Array)[]) {
  const state = { read: 0 };
  async function* bytes() {
    for (const part of parts) {
      state.read++;
      yield typeof part === 'string' ? encoder.encode(part) : part;
    }
  }
  return { body: bytes(), state };
}

const all = async (parts: (string | Uint8Array)[]) => {
  const out: unknown[] = [];
  for await (const chunk of sseChunks(bodyOf(parts).body, headers)) out.push(chunk);
  return out;
};

describe('sseChunks', () => {
  it('yields the JSON of each event, with lines ended by LF, CRLF or CR, split anywhere', async () => {
    const text = 'data: {"n":1}\n\ndata: {"n":2}\r\n\r\ndata: {"n":3}\r\rdata: {"n":4}\n\ndata: [DONE]\n\n';
    expect(await all([text])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    // The same bytes one at a time: a CRLF cut between its halves is one line end, not two.
    const bytes = encoder.encode(text);
    expect(await all([...bytes].map((b) => Uint8Array.of(b)))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it('reads every event of a read that holds thousands, with a CR only near its end', async () => {
    const many = Array.from({ length: 3000 }, (_, n) => `data: {"n":${n}}\n\n`).join('');
    const out = await all([`${many}data: {"n":3000}\r\n\r\ndata: [DONE]\n\n`]);
    expect(out).toHaveLength(3001);
    expect(out.at(-1)).toEqual({ n: 3000 });
  });

  it('reads an event of a megabyte that arrives in many reads', async () => {
    const text = 'x'.repeat(1_000_000);
    const bytes = encoder.encode(`data: {"text":"${text}"}\r\n\r\ndata: {"n":2}\n\n`);
    const reads = Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) =>
      bytes.slice(i * 4096, (i + 1) * 4096),
    );
    expect(await all(reads)).toEqual([{ text }, { n: 2 }]);
  });

  it('keeps a character whose UTF-8 bytes arrive in two chunks whole', async () => {
    const bytes = encoder.encode('data: {"text":"naïve 🙂"}\n\n');
    const cut = bytes.indexOf(0xf0) + 2;
    expect(await all([bytes.slice(0, cut), bytes.slice(cut)])).toEqual([{ text: 'naïve 🙂' }]);
  });

  it('skips comments, unknown fields and events without data, and joins data lines with LF', async () => {
    const text = ': keep-alive\n\nid: 7\nretry: 10\nevent: ping\n\ndata: {"a":\ndata: 1}\n\n';
    expect(await all([text])).toEqual([{ a: 1 }]);
    expect(await all(['data:{"no":"space"}\n\n'])).toEqual([{ no: 'space' }]);
  });

  it('stops at [DONE] without reading the rest of the body', async () => {
    const { body, state } = bodyOf(['data: {"n":1}\n\ndata: [DONE]\n\n', 'data: {"n":2}\n\n', 'more']);
    const out: unknown[] = [];
    for await (const chunk of sseChunks(body, headers)) out.push(chunk);
    expect(out).toEqual([{ n: 1 }]);
    expect(state.read).toBe(1);
  });

  it('ends quietly with a body that ends without [DONE], and drops an event left unfinished', async () => {
    expect(await all(['data: {"n":1}\n\n', 'data: {"n":2}'])).toEqual([{ n: 1 }]);
    expect(await all([])).toEqual([]);
    // A body whose last event ends with CR CR, the second CR last of all.
    expect(await all(['data: {"n":1}\r', '\r'])).toEqual([{ n: 1 }]);
  });

  it('throws an error sent in the stream as an APIError without a status, as the SDK does', async () => {
    const inChunk = all(['data: {"n":1}\n\ndata: {"error":{"message":"overloaded","code":"busy"}}\n\n']);
    await expect(inChunk).rejects.toBeInstanceOf(APIError);
    await expect(inChunk).rejects.toMatchObject({ status: undefined, message: 'overloaded', code: 'busy' });
    const asEvent = all(['event: error\ndata: {"message":"gave up"}\n\n']);
    await expect(asEvent).rejects.toMatchObject({ status: undefined, message: 'gave up' });
  });

  it('throws a SyntaxError for data that is not JSON', async () => {
    await expect(all(['data: {"n":\n\n'])).rejects.toBeInstanceOf(SyntaxError);
  });

  it('passes on the failure of the body itself', async () => {
    async function* broken() {
      yield encoder.encode('data: {"n":1}\n\n');
      throw new Error('socket hang up');
    }
    const out: unknown[] = [];
    await expect(
      (async () => {
        for await (const chunk of sseChunks(broken(), headers)) out.push(chunk);
      })(),
    ).rejects.toThrow('socket hang up');
    expect(out).toEqual([{ n: 1 }]);
  });
});

import { ApiKeysService } from '@parley/auth';
import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { conversationScript, snapshotFixture, toAppend, until } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { ADMIN_KEY, startReadSideApp, type ReadSideApp } from '../testing/read-side-app';
import { StreamHub } from './stream-hub';

/** An open SSE response and everything it has received so far. */
interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  text: () => string;
  ended: Promise<void>;
  close: () => void;
}

describe('SSE stream limits', () => {
  let side: ReadSideApp;
  let store: EventStore;
  let hub: StreamHub;
  let address: string;
  let clientKey: string;
  let clientKeyId: string;

  const script = (id: string) => toAppend(conversationScript(id, { snapshot: snapshotFixture() }).slice(0, 4));
  const newConversation = async () => {
    const id = randomUUID();
    await store.append(streamIdOf(id), script(id));
    return id;
  };

  const openStream = (conversationId: string, key = ADMIN_KEY): Promise<OpenStream> =>
    new Promise((resolve, reject) => {
      let req: ClientRequest | undefined = undefined;
      req = request(
        `${address}/api/v1/conversations/${conversationId}/stream`,
        { headers: { authorization: `Bearer ${key}` } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += String(chunk)));
          const ended = new Promise<void>((done) => res.on('close', done));
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: () => body,
            ended,
            close: () => req?.destroy(),
          });
        },
      );
      req.on('error', (err) => (String(err).includes('socket hang up') ? undefined : reject(err)));
      req.end();
    });

  beforeAll(async () => {
    side = await startReadSideApp('sse_limits', () => ({}), {
      SSE_MAX_STREAMS_PER_SUBJECT: '2',
      SSE_MAX_STREAMS: '3',
      SSE_MAX_BUFFERED_BYTES: '65536',
      SSE_CREDENTIAL_CHECK_MS: '100',
    });
    store = side.app.get(EVENT_STORE);
    hub = side.app.get(StreamHub);
    await side.app.listen(0, '127.0.0.1');
    const { port } = side.app.getHttpServer().address() as { port: number };
    address = `http://127.0.0.1:${port}`;
    const created = await side.app.get(ApiKeysService).create({ subject: 'client-a', roles: ['client'] });
    clientKey = created.key;
    clientKeyId = created.id;
  });
  afterAll(async () => {
    await side?.close();
  });
  afterEach(async () => {
    await until(() => hub.count() === 0, 5000);
  });

  it('refuses a stream past the per-subject cap and past the total cap with RATE_LIMITED, and takes one again once another closes', async () => {
    const id = await newConversation();
    const admin = [await openStream(id), await openStream(id)];
    const overSubject = await openStream(id);
    expect(overSubject.status).toBe(429);
    await overSubject.ended;
    expect(JSON.parse(overSubject.text()).error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 2 } });
    expect(overSubject.headers['retry-after']).toBe('5');

    const client = await openStream(id, clientKey);
    expect(client.status).toBe(200);
    const overTotal = await openStream(id, clientKey);
    expect(overTotal.status).toBe(429);
    await overTotal.ended;
    expect(JSON.parse(overTotal.text()).error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3 } });
    expect(hub.count()).toBe(3);

    admin[0].close();
    await until(() => hub.count() === 2, 5000);
    const again = await openStream(id);
    expect(again.status).toBe(200);
    for (const s of [admin[1], client, again]) s.close();
  });

  it('drops a client that does not read once its buffered bytes pass the cap, and frees its seat', async () => {
    const id = await newConversation();
    const live = side.app.get<LiveDeltas>(LIVE_DELTAS);
    const { port } = new URL(address);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let closed = false;
    socket.on('close', () => (closed = true)).on('error', () => undefined);
    socket.write(
      `GET /api/v1/conversations/${id}/stream HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${ADMIN_KEY}\r\n\r\n`,
    );
    await until(() => hub.count() === 1, 5000);
    // The client reads nothing from now on: what the server writes piles up in its buffers.
    socket.pause();
    const text = 'x'.repeat(256 * 1024);
    for (let sent = 0; hub.count() > 0 && sent < 400; sent++) {
      live.publish(id, { turnNo: 1, callNo: 1, attempt: 1, text });
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => hub.count() === 0, 5000);
    expect(hub.conversations).toBe(0);
    socket.resume();
    await until(() => closed, 5000);
  });

  it.each(['ConversationKilled', 'ConversationTerminated'] as const)(
    'ends the stream when the conversation is closed (%s), and one opened afterwards ends after the replay',
    async (type) => {
      const id = await newConversation();
      const open = await openStream(id);
      await until(() => open.text().includes('id: 3\n'), 5000);
      await store.append(streamIdOf(id), toAppend([{ type, data: { reason: 'test' } }]));
      await open.ended;
      expect(open.text()).toContain(`id: 4\nevent: ${type}\n`);
      const late = await openStream(id);
      await late.ended;
      expect([...late.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([0, 1, 2, 3, 4]);
    },
  );

  it('ends a stream whose API key is revoked, with an UNAUTHENTICATED error event', async () => {
    const id = randomUUID();
    await store.append(streamIdOf(id), script(id));
    const open = await openStream(id, clientKey);
    expect(open.status).toBe(200);
    await until(() => open.text().includes('id: 3\n'), 5000);
    await side.app.get(ApiKeysService).revoke(clientKeyId);
    await open.ended;
    expect(open.text()).toMatch(/event: error\ndata: \{"error":\{"code":"UNAUTHENTICATED"/);
  });

  it('wakes only the streams of the conversation that changed: appends to A read nothing for B', async () => {
    const [a, b] = [await newConversation(), await newConversation()];
    const reads = new Map<string, number>();
    const readStream = store.readStream.bind(store);
    const counted = jest.spyOn(store, 'readStream').mockImplementation((streamId, options) => {
      reads.set(streamId, (reads.get(streamId) ?? 0) + 1);
      return readStream(streamId, options);
    });
    try {
      const onA = await openStream(a);
      const onB = await openStream(b);
      await until(() => onA.text().includes('id: 3\n') && onB.text().includes('id: 3\n'), 5000);
      const readsOfB = reads.get(streamIdOf(b));
      for (let i = 0; i < 5; i++)
        await store.append(
          streamIdOf(a),
          toAppend([
            { type: 'ConversationPaused', data: { reason: null } },
            { type: 'ConversationResumed', data: {} },
          ]),
        );
      await until(() => onA.text().includes('id: 13\n'), 5000);
      expect(reads.get(streamIdOf(a))).toBeGreaterThan(1);
      expect(reads.get(streamIdOf(b))).toBe(readsOfB);
      expect(hub.conversations).toBe(2);
      onA.close();
      onB.close();
      await until(() => hub.conversations === 0, 5000);
    } finally {
      counted.mockRestore();
    }
  });
});

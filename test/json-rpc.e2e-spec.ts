import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { connect, headers, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

interface Sent {
  /** HTTP's status; NATS has none. */
  status?: number;
  /** The JSON-RPC answer; undefined when there was none (HTTP 204, no NATS reply). */
  body: any;
}

/** One JSON-RPC door: `POST /rpc` or the NATS subject `<prefix>.rpc`, as the key `key` (null: none). */
interface Door {
  name: string;
  /** `quietMs`: how long NATS waits for an answer that should not come. */
  send(message: unknown, key?: string | null, quietMs?: number): Promise<Sent>;
  sendRaw(text: string): Promise<Sent>;
}

/**
 * JSON-RPC 2.0 on both of its doors against the running all-in-one server: the methods are the
 * command and query names, the params their bodies, and each call is checked as on every door.
 */
describe('JSON-RPC 2.0 on POST /rpc and NATS <prefix>.rpc', () => {
  let parley: ParleyUnderTest;
  let nc: NatsConnection;
  let store: EventStore;
  let clientKey: string;

  beforeAll(async () => {
    parley = await startParley('json_rpc_e2e');
    nc = await connect({ servers: parley.config.nats.url! });
    store = parley.app.get(EVENT_STORE);
    const created = await parley.call('POST', '/api/v1/keys', { subject: 'svc-orders', roles: ['client'] });
    clientKey = created.body.key;
  });
  afterAll(async () => {
    await nc?.close();
    await parley?.close();
  });

  const http: Door = {
    name: 'HTTP',
    send: (message, key = ADMIN_KEY) => post(JSON.stringify(message), key),
    sendRaw: (text) => post(text, ADMIN_KEY),
  };
  async function post(text: string, key: string | null): Promise<Sent> {
    const res = await fetch(`${parley.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: text,
    });
    const body = await res.text();
    return { status: res.status, body: body ? JSON.parse(body) : undefined };
  }
  const nats: Door = {
    name: 'NATS',
    send: (message, key = ADMIN_KEY, quietMs) => request(JSON.stringify(message), key, quietMs),
    sendRaw: (text) => request(text, ADMIN_KEY),
  };
  async function request(text: string, key: string | null, quietMs = 15_000): Promise<Sent> {
    const h = headers();
    if (key) h.set('authorization', `Bearer ${key}`);
    try {
      const msg = await nc.request(`${parley.config.prefix}.rpc`, text, { headers: h, timeout: quietMs });
      return { body: JSON.parse(msg.string()) };
    } catch (err) {
      if ((err as { code?: string }).code === 'TIMEOUT') return { body: undefined };
      throw err;
    }
  }

  const eventCount = async (id: string) => (await store.readStream(`conversation-${id}`).catch(() => [])).length;
  const start = async (door: Door): Promise<{ id: string; position: string }> => {
    const { body } = await door.send({
      jsonrpc: '2.0',
      id: 'start',
      method: 'startConversation',
      params: { agentCode: 'HELPDESK', actionCode: 'CHAT' },
    });
    expect(body.error).toBeUndefined();
    return { id: body.result.conversationId, position: body.result.position };
  };

  describe.each(['HTTP', 'NATS'])('over %s', (doorName) => {
    const door = () => (doorName === 'HTTP' ? http : nats);

    it('runs a command and a query in single requests, the path parameter a named field', async () => {
      parley.simulator.script([{ when: { lastUserMessage: /parcel P-77/ }, reply: { text: 'P-77 is in Lyon.' } }]);
      const { id } = await start(door());
      const sent = await door().send({
        jsonrpc: '2.0',
        id: 7,
        method: 'sendMessage',
        params: { conversationId: id, content: 'Where is parcel P-77?', commandId: `send-${doorName}` },
      });
      if (doorName === 'HTTP') expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        result: { conversationId: id, status: 'CO', reply: 'P-77 is in Lyon.' },
      });
      const found = await door().send({
        jsonrpc: '2.0',
        id: 'q',
        method: 'findConversation',
        params: { conversationId: id, minPosition: sent.body.result.position },
      });
      expect(found.body).toEqual({
        jsonrpc: '2.0',
        id: 'q',
        result: expect.objectContaining({ conversationUuid: id, llmProcessStatus: 'CO' }),
      });
      // The query table's null is a result, as over NATS.
      const missing = await door().send({
        jsonrpc: '2.0',
        id: 'm',
        method: 'findConversation',
        params: { conversationId: randomUUID() },
      });
      expect(missing.body).toEqual({ jsonrpc: '2.0', id: 'm', result: null });
    }, 30_000);

    it('answers a batch call by call in its order, each independently, and leaves notifications out', async () => {
      const { id, position } = await start(door());
      const before = await eventCount(id);
      const { status, body } = await door().send([
        { jsonrpc: '2.0', id: 1, method: 'findConversation', params: { conversationId: id, minPosition: position } },
        { jsonrpc: '2.0', method: 'getToolCalls', params: { conversationId: id } },
        { jsonrpc: '2.0', id: 'two', method: 'noSuchMethod', params: {} },
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'getConversationMessages',
          params: { conversationId: id, minPosition: position },
        },
        { jsonrpc: '2.0', id: 4, method: 'sendMessage', params: { conversationId: id, content: 7 } },
        1,
      ]);
      if (doorName === 'HTTP') expect(status).toBe(200);
      expect(body.map((r: { id: unknown }) => r.id)).toEqual([1, 'two', 3, 4, null]);
      expect(body[0].result).toMatchObject({ conversationUuid: id });
      expect(body[1].error).toMatchObject({ code: -32601, data: { code: 'NOT_FOUND' } });
      expect(body[2]).toEqual({ jsonrpc: '2.0', id: 3, result: expect.any(Array) });
      expect(body[3].error).toMatchObject({
        code: -32602,
        data: { code: 'VALIDATION_FAILED', details: { problems: [expect.objectContaining({ path: 'content' })] } },
      });
      expect(body[4].error).toMatchObject({ code: -32600, data: { code: 'VALIDATION_FAILED' } });
      expect(await eventCount(id)).toBe(before);
    });

    it('runs notifications without answering them; a message of notifications only gets no answer', async () => {
      const ids = [randomUUID(), randomUUID()];
      const { status, body } = await door().send(
        ids.map((conversationId) => ({
          jsonrpc: '2.0',
          method: 'startConversation',
          params: { agentCode: 'HELPDESK', actionCode: 'CHAT', conversationId },
        })),
        ADMIN_KEY,
        1000,
      );
      expect(body).toBeUndefined();
      if (doorName === 'HTTP') expect(status).toBe(204);
      for (const id of ids) expect(await eventCount(id)).toBe(1);
    });

    it('answers each standard error, with Parley’s error in data, and appends nothing', async () => {
      const { id } = await start(door());
      const before = await eventCount(id);

      const parse = await door().sendRaw('{"jsonrpc": "2.0", "method": ');
      if (doorName === 'HTTP') expect(parse.status).toBe(400);
      expect(parse.body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, data: { code: 'VALIDATION_FAILED' } },
      });

      const empty = await door().send([]);
      expect(empty.body).toMatchObject({ id: null, error: { code: -32600 } });
      const noVersion = await door().send({ id: 5, method: 'findConversation', params: { conversationId: id } });
      expect(noVersion.body).toMatchObject({ id: 5, error: { code: -32600, data: { code: 'VALIDATION_FAILED' } } });
      const byPosition = await door().send({ jsonrpc: '2.0', id: 6, method: 'findConversation', params: [id] });
      expect(byPosition.body).toMatchObject({ id: 6, error: { code: -32602 } });
      const unknown = await door().send({ jsonrpc: '2.0', id: 8, method: 'toString' });
      expect(unknown.body).toMatchObject({ id: 8, error: { code: -32601, data: { code: 'NOT_FOUND' } } });
      const invalid = await door().send({
        jsonrpc: '2.0',
        id: 9,
        method: 'sendMessage',
        params: { conversationId: id, content: 'hi', surprise: true },
      });
      expect(invalid.body.error).toMatchObject({
        code: -32602,
        data: { code: 'VALIDATION_FAILED', details: { problems: expect.any(Array) } },
      });
      const notFound = await door().send({
        jsonrpc: '2.0',
        id: 10,
        method: 'terminateConversation',
        params: { conversationId: randomUUID() },
      });
      expect(notFound.body.error).toMatchObject({ code: -32004, data: { code: 'NOT_FOUND' } });
      const forbidden = await door().send(
        { jsonrpc: '2.0', id: 11, method: 'killConversation', params: { conversationId: id } },
        clientKey,
      );
      expect(forbidden.body.error).toMatchObject({ code: -32003, data: { code: 'FORBIDDEN' } });
      const anonymous = await door().send(
        { jsonrpc: '2.0', id: 13, method: 'findConversation', params: { conversationId: id } },
        null,
      );
      if (doorName === 'HTTP') expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ id: null, error: { code: -32001, data: { code: 'UNAUTHENTICATED' } } });

      expect(await eventCount(id)).toBe(before);
    });
  });

  it('refuses a body that is not JSON on HTTP as a parse error, whatever its content type', async () => {
    const res = await fetch(`${parley.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${ADMIN_KEY}` },
      body: 'hello',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('refuses a body over the HTTP limit as a whole, PAYLOAD_TOO_LARGE with id null, and runs none of it', async () => {
    const id = randomUUID();
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'startConversation',
      params: { agentCode: 'HELPDESK', actionCode: 'CHAT', conversationId: id },
    };
    const big = {
      ...call,
      params: { ...call.params, metadata: { note: 'x'.repeat(parley.config.http.bodyLimitBytes) } },
    };
    const res = await http.send([call, big]);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ id: null, error: { code: -32013, data: { code: 'PAYLOAD_TOO_LARGE' } } });
    expect(await eventCount(id)).toBe(0);
  });

  it('counts every call of a batch against the caller’s rate limit, and refuses a NATS message over the limit whole', async () => {
    const limited = await startParley('json_rpc_limit_e2e', {
      RATE_LIMIT_PER_MINUTE: '3',
      NATS_MAX_PAYLOAD_BYTES: '1024',
    });
    try {
      const calls = Array.from({ length: 5 }, (_, n) => ({ jsonrpc: '2.0', id: n, method: 'getAllActions' }));
      const res = await fetch(`${limited.url}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
        body: JSON.stringify(calls),
      });
      const body = (await res.json()) as { error?: { code: number; data: { code: string } } }[];
      const codes = body.map((r) => r.error?.data.code ?? 'ok');
      expect(codes.filter((c: string) => c === 'ok')).toHaveLength(3);
      expect(codes.filter((c: string) => c === 'RATE_LIMITED')).toHaveLength(2);
      expect(body.find((r) => r.error)?.error?.code).toBe(-32029);

      const h = headers();
      h.set('authorization', `Bearer ${ADMIN_KEY}`);
      const call = { jsonrpc: '2.0', id: 1, method: 'getAllActions', params: { padding: 'x'.repeat(2000) } };
      const big = await nc.request(`${limited.config.prefix}.rpc`, JSON.stringify(call), {
        headers: h,
        timeout: 10_000,
      });
      expect(big.json()).toMatchObject({ id: null, error: { code: -32013, data: { code: 'PAYLOAD_TOO_LARGE' } } });
    } finally {
      await limited.close();
    }
  });

  it('publishes nothing back for a notification sent without a reply subject over NATS, and still runs it', async () => {
    const id = randomUUID();
    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    nc.publish(
      `${parley.config.prefix}.rpc`,
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'startConversation',
        params: { agentCode: 'HELPDESK', actionCode: 'CHAT', conversationId: id },
      }),
      { headers: h },
    );
    for (const deadline = Date.now() + 5000; Date.now() < deadline && (await eventCount(id)) === 0;)
      await new Promise((r) => setTimeout(r, 50));
    expect(await eventCount(id)).toBe(1);
  });
});

import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { startParley, type ParleyUnderTest } from './support/parley-app';

describe('conversation commands: idempotency, races, kill and bad input', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('conv_cmds');
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => {
    parley.simulator.reset();
    parley.simulator.setLatency(0);
  });

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
  const count = async (id: string) => (await store.readStream(`conversation-${id}`)).length;

  it('returns the first result for a repeated Idempotency-Key and appends nothing', async () => {
    const key = { 'idempotency-key': 'start-once-1' };
    const first = await parley.call(
      'POST',
      '/api/v1/conversations',
      { agentCode: 'HELPDESK', actionCode: 'CHAT' },
      key,
    );
    const again = await parley.call(
      'POST',
      '/api/v1/conversations',
      { agentCode: 'HELPDESK', actionCode: 'CHAT' },
      key,
    );
    expect(first.status).toBe(201);
    expect(again.body.conversationId).toBe(first.body.conversationId);
    const id = first.body.conversationId;
    expect(await count(id)).toBe(1);

    parley.simulator.script([{ reply: { text: 'Only once.' } }]);
    const msgKey = { 'idempotency-key': 'msg-1' };
    const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi' }, msgKey);
    const events = await count(id);
    const resent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi' }, msgKey);
    expect(resent.body).toMatchObject({ status: 'CO', reply: sent.body.reply });
    expect(await count(id)).toBe(events);
    expect(parley.simulator.requests).toHaveLength(1);

    const other = await parley.call(
      'POST',
      `/api/v1/conversations/${id}/messages`,
      { content: 'something else' },
      msgKey,
    );
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await count(id)).toBe(events);
  });

  it('treats Idempotency-Keys named like Object.prototype members as ordinary keys', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const key = { 'idempotency-key': name };
      const body = { agentCode: 'HELPDESK', actionCode: 'CHAT' };
      const first = await parley.call('POST', '/api/v1/conversations', body, key);
      const again = await parley.call('POST', '/api/v1/conversations', body, key);
      expect([first.status, again.status]).toEqual([201, 201]);
      expect(again.body.conversationId).toBe(first.body.conversationId);
      expect(await count(first.body.conversationId)).toBe(1);
      const id = await start();
      parley.simulator.script([{ reply: { text: 'Once.' } }]);
      const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi' }, key);
      expect(sent.body).toMatchObject({ status: 'CO', reply: 'Once.' });
      const events = await count(id);
      const resent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi' }, key);
      expect(resent.body).toEqual(sent.body);
      expect(await count(id)).toBe(events);
    }
  });

  it('refuses an Idempotency-Key over 255 characters and appends nothing', async () => {
    const id = await start();
    const before = await count(id);
    const long = { 'idempotency-key': 'k'.repeat(256) };
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi' }, long);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: [{ path: 'Idempotency-Key', message: 'expected at most 255 characters' }] },
    });
    expect(await count(id)).toBe(before);
  });

  it('refuses a chosen conversation id in the namespace of ids derived from Idempotency-Keys', async () => {
    const body = { agentCode: 'HELPDESK', actionCode: 'CHAT' };
    const derived = await parley.call('POST', '/api/v1/conversations', body, { 'idempotency-key': 'derive-me' });
    const derivedId = derived.body.conversationId as string;
    expect(derivedId[14]).toBe('5');
    const squat = '3f2a8c1e-4b5d-5e6f-8a7b-9c0d1e2f3a4b';
    const res = await parley.call('POST', '/api/v1/conversations', { ...body, conversationId: squat });
    expect(res.status).toBe(400);
    expect(res.body.error.details.problems[0].path).toBe('conversationId');
    await expect(store.readStream(`conversation-${squat}`)).rejects.toThrow();
    const chosen = await parley.call('POST', '/api/v1/conversations', {
      ...body,
      conversationId: '3f2a8c1e-4b5d-4e6f-8a7b-9c0d1e2f3a4b',
    });
    expect(chosen.status).toBe(201);
  });

  it('answers a replay with the first result even after later turns moved the conversation on', async () => {
    parley.simulator.script([
      { when: { lastUserMessage: /^one$/ }, reply: { text: 'First answer.' } },
      { reply: { text: 'Later answer.' } },
    ]);
    const id = await start();
    const key = { 'idempotency-key': 'replay-first' };
    const first = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'one' }, key);
    expect(first.body).toMatchObject({ status: 'CO', reply: 'First answer.' });
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'two' });
    const events = await count(id);

    const replayed = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'one' }, key);

    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual(first.body);
    expect(await count(id)).toBe(events);
  });

  it('lets one of two concurrent messages win; the other gets CONVERSATION_BUSY', async () => {
    parley.simulator.setLatency(30);
    parley.simulator.script([{ reply: { text: 'One answer at a time, please.' } }]);
    const id = await start();
    const [a, b] = await Promise.all([
      parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'first' }),
      parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'second' }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.error.code).toBe('CONVERSATION_BUSY');
    const turns = (await store.readStream(`conversation-${id}`)).filter((e) => e.type === 'TurnStarted');
    expect(turns).toHaveLength(1);
  });

  it('kills a conversation while the model streams and aborts the stream within a second', async () => {
    parley.simulator.setLatency(200);
    parley.simulator.script([
      { reply: { text: 'a very slow reply that would take many seconds to finish streaming to the end' } },
    ]);
    const id = await start();
    const accepted = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'go', wait: false });
    expect(accepted.status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = Date.now();
    const killed = await parley.call('POST', `/api/v1/conversations/${id}/kill`, { reason: 'runaway' });
    expect(killed.body.status).toBe('KI');
    const deadline = killedAt + 1000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      closed = parley.simulator.openRequests === 0;
      if (!closed) await new Promise((r) => setTimeout(r, 20));
    }
    expect(closed).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const types = (await store.readStream(`conversation-${id}`)).map((e) => e.type);
    expect(types.at(-1)).toBe('ConversationKilled');
    const afterKill = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello?' });
    expect(afterKill.body.error.code).toBe('CONVERSATION_CLOSED');
  });

  describe('bad input gets the API error and appends nothing', () => {
    let id: string;
    beforeAll(async () => {
      id = await start();
    });

    it.each([
      ['an empty message', { content: '   ' }, 400, 'VALIDATION_FAILED'],
      ['a message over the length limit', { content: 'x'.repeat(100_001) }, 413, 'PAYLOAD_TOO_LARGE'],
      ['an unknown field', { content: 'hi', colour: 'red' }, 400, 'VALIDATION_FAILED'],
      [
        'a malformed attachment',
        { content: 'hi', attachments: [{ mediaType: 'image/png', url: 'not a url' }] },
        400,
        'VALIDATION_FAILED',
      ],
      ...[
        'file:///etc/passwd',
        'http://169.254.169.254/latest/meta-data/',
        'https://169.254.169.254/latest/meta-data/',
        'https://[::ffff:169.254.169.254]/latest/meta-data/',
        'https://10.0.0.7/internal.png',
        'https://localhost/admin.png',
      ].map((url) => [
        `an attachment URL ${url}`,
        { content: 'hi', attachments: [{ mediaType: 'image/png', url }] },
        400,
        'VALIDATION_FAILED',
      ]),
    ] as [string, object, number, string][])('%s', async (_name, body, status, code) => {
      const before = await count(id);
      const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, body);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(await count(id)).toBe(before);
    });

    it('names the attachment whose URL is refused, and why', async () => {
      const before = await count(id);
      const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, {
        content: 'hi',
        attachments: [
          { mediaType: 'image/png', url: 'https://93.184.215.14/fine.png' },
          { mediaType: 'image/png', url: 'https://169.254.169.254/latest/meta-data/' },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details.problems).toEqual([
        { path: 'attachments.1.url', message: expect.stringMatching(/private, loopback or link-local address/) },
      ]);
      expect(await count(id)).toBe(before);
    });

    it('names each invalid field', async () => {
      const res = await parley.call('POST', '/api/v1/conversations', { agentCode: '', actionCode: 'A'.repeat(13) });
      expect(res.status).toBe(400);
      expect(res.body.error.details.problems.map((p: { path: string }) => p.path).sort()).toEqual([
        'actionCode',
        'agentCode',
      ]);
    });

    it('answers NOT_FOUND for an unknown agent or action', async () => {
      const agent = await parley.call('POST', '/api/v1/conversations', { agentCode: 'NOBODY', actionCode: 'CHAT' });
      expect(agent.status).toBe(404);
      expect(agent.body.error.message).toContain('NOBODY');
      const action = await parley.call('POST', '/api/v1/conversations', {
        agentCode: 'HELPDESK',
        actionCode: 'NOTHING',
      });
      expect(action.status).toBe(404);
    });

    it('answers NOT_FOUND for an unknown conversation', async () => {
      const res = await parley.call('POST', '/api/v1/conversations/01a20000-0000-7000-8000-000000000000/messages', {
        content: 'hi',
      });
      expect(res.status).toBe(404);
    });

    it('refuses answers to a conversation that is not waiting', async () => {
      const before = await count(id);
      const res = await parley.call('POST', `/api/v1/conversations/${id}/answers`, { answers: { a: 'b' } });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('CONVERSATION_NOT_WAITING');
      expect(await count(id)).toBe(before);
    });

    it('refuses a body that is not JSON', async () => {
      const res = await fetch(`${parley.url}/api/v1/conversations/${id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer pk_test_admin_key_0123456789abcdef`, 'content-type': 'application/json' },
        body: '{"content": ',
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.code).toBe('VALIDATION_FAILED');
    });
  });
});

import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, maxPosition, type EventStore } from '@parley/event-store';
import { REDIS, type Redis } from '@parley/platform';
import { connect, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { ADMIN_KEY, startParley, type ParleyUnderTest, natsCall } from './support/parley-app';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Creates an API key through the admin route and returns the secret shown once. */
async function createKey(parley: ParleyUnderTest, subject: string, roles: string[]): Promise<string> {
  const created = await parley.call('POST', '/api/v1/keys', { subject, roles });
  expect(created.status).toBe(201);
  return created.body.key as string;
}

/** Starts a CHAT conversation as the holder of `key`; its id and position. */
async function startAs(parley: ParleyUnderTest, key: string): Promise<{ id: string; position: string }> {
  const res = await parley.call(
    'POST',
    '/api/v1/conversations',
    { agentCode: 'HELPDESK', actionCode: 'CHAT' },
    bearer(key),
  );
  expect(res.status).toBe(201);
  return { id: res.body.conversationId as string, position: res.body.position as string };
}

describe('roles and ownership through the assembled app, over HTTP and NATS', () => {
  let parley: ParleyUnderTest;
  let nc: NatsConnection;
  let alice: string;
  let bob: string;
  let auditor: string;

  beforeAll(async () => {
    parley = await startParley('security');
    nc = await connect({ servers: '127.0.0.1:4222' });
    alice = await createKey(parley, 'alice', ['client']);
    bob = await createKey(parley, 'bob', ['client']);
    auditor = await createKey(parley, 'audit-team', ['auditor']);
  });
  afterAll(async () => {
    await nc.close();
    await parley.close();
  });

  const start = (key: string) => startAs(parley, key);
  const conv = (id: string, rest = '') => `/api/v1/conversations/${id}${rest}`;
  const errorOf = (res: { status: number; body: any }) => [res.status, res.body?.error?.code];

  describe('each role against each kind of route', () => {
    it('lets a client start and talk in its own conversation, and refuses it kill, pause, catalog writes and keys', async () => {
      const { id } = await start(alice);
      const sent = await parley.call('POST', conv(id, '/messages'), { content: 'hello there' }, bearer(alice));
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ conversationId: id, status: 'CO', reply: expect.any(String) });
      const own = await parley.call('GET', `${conv(id)}?minPosition=${sent.body.position}`, undefined, bearer(alice));
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ conversationUuid: id, owner: 'alice', llmProcessStatus: 'CO' });

      expect(errorOf(await parley.call('POST', conv(id, '/kill'), {}, bearer(alice)))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await parley.call('POST', conv(id, '/pause'), {}, bearer(alice)))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await parley.call('GET', conv(id, '/verify'), undefined, bearer(alice)))).toEqual([
        403,
        'FORBIDDEN',
      ]);
      const persona = { code: 'SNEAKY', llmPersonaPrompt: 'Obey me.' };
      expect(errorOf(await parley.call('POST', '/api/v1/catalog/personas', persona, bearer(alice)))).toEqual([
        403,
        'FORBIDDEN',
      ]);
      expect(
        errorOf(await parley.call('POST', '/api/v1/catalog/apply', { personas: [persona] }, bearer(alice))),
      ).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await parley.call('DELETE', '/api/v1/catalog/actions/CHAT', undefined, bearer(alice)))).toEqual([
        403,
        'FORBIDDEN',
      ]);
      expect(errorOf(await parley.call('GET', '/api/v1/keys', undefined, bearer(alice)))).toEqual([403, 'FORBIDDEN']);
      expect(
        errorOf(await parley.call('POST', '/api/v1/keys', { subject: 'alice', roles: ['admin'] }, bearer(alice))),
      ).toEqual([403, 'FORBIDDEN']);
      expect((await parley.call('GET', '/api/v1/catalog/personas')).body).toEqual([]);
    });

    it('lets an auditor read the events, state and verification of any conversation, and refuses every command', async () => {
      const { id } = await start(alice);
      await parley.call('POST', conv(id, '/messages'), { content: 'for the record' }, bearer(alice));

      const events = await parley.call('GET', conv(id, '/events'), undefined, bearer(auditor));
      expect(events.status).toBe(200);
      expect(JSON.stringify(events.body)).toContain('ConversationStarted');
      const state = await parley.call('GET', conv(id, '/state'), undefined, bearer(auditor));
      expect(state.status).toBe(200);
      expect(JSON.stringify(state.body)).toContain(id);
      const verified = await parley.call('GET', conv(id, '/verify'), undefined, bearer(auditor));
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ ok: true });
      expect((await parley.call('GET', '/api/v1/events', undefined, bearer(auditor))).status).toBe(200);
      expect((await parley.call('GET', '/api/v1/catalog/actions', undefined, bearer(auditor))).status).toBe(200);

      const refused = [
        await parley.call(
          'POST',
          '/api/v1/conversations',
          { agentCode: 'HELPDESK', actionCode: 'CHAT' },
          bearer(auditor),
        ),
        await parley.call('POST', conv(id, '/messages'), { content: 'auditors do not talk' }, bearer(auditor)),
        await parley.call('POST', conv(id, '/terminate'), {}, bearer(auditor)),
        await parley.call('POST', conv(id, '/kill'), {}, bearer(auditor)),
        await parley.call(
          'POST',
          '/api/v1/catalog/personas',
          { code: 'AUDIT', llmPersonaPrompt: 'x' },
          bearer(auditor),
        ),
        await parley.call('GET', '/api/v1/keys', undefined, bearer(auditor)),
      ];
      expect(refused.map(errorOf)).toEqual(refused.map(() => [403, 'FORBIDDEN']));
      const after = await parley.call('GET', conv(id, '/events'), undefined, bearer(auditor));
      expect(after.body).toEqual(events.body);
    });

    it('lets an admin pause, resume and kill anyone’s conversation and manage the catalog and keys', async () => {
      const { id } = await start(alice);
      const paused = await parley.call('POST', conv(id, '/pause'), { reason: 'review' });
      expect([paused.status, paused.body.status]).toEqual([200, 'PA']);
      const resumed = await parley.call('POST', conv(id, '/resume'), {});
      expect(resumed.status).toBeLessThan(300);
      const killed = await parley.call('POST', conv(id, '/kill'), { reason: 'abuse' });
      expect(killed.status).toBe(200);
      expect(killed.body.status).not.toBe(resumed.body.status);

      const persona = await parley.call('POST', '/api/v1/catalog/personas', {
        code: 'PIRATE',
        llmPersonaPrompt: 'Arr.',
      });
      expect(persona.status).toBe(201);
      expect((await parley.call('DELETE', '/api/v1/catalog/personas/PIRATE')).status).toBe(204);

      const temp = await parley.call('POST', '/api/v1/keys', { subject: 'svc-temp', roles: ['client'] });
      expect(temp.status).toBe(201);
      const listed = await parley.call('GET', '/api/v1/keys');
      expect(listed.body.keys.map((k: { subject: string }) => k.subject)).toEqual(
        expect.arrayContaining(['alice', 'bob', 'audit-team', 'svc-temp']),
      );
      expect(JSON.stringify(listed.body)).not.toContain(temp.body.key);
      expect((await parley.call('DELETE', `/api/v1/keys/${temp.body.id}`)).status).toBe(200);
      const revoked = await parley.call('GET', '/api/v1/actions', undefined, bearer(temp.body.key));
      expect(errorOf(revoked)).toEqual([401, 'UNAUTHENTICATED']);
    });

    it('answers 401 without a credential or with a wrong one, and serves /health, /health/ready and /metrics without one', async () => {
      const noKey = await fetch(`${parley.url}/api/v1/conversations`);
      expect(noKey.status).toBe(401);
      expect(((await noKey.json()) as any).error.code).toBe('UNAUTHENTICATED');
      expect(errorOf(await parley.call('GET', '/api/v1/actions', undefined, bearer('pk_not_a_real_key')))).toEqual([
        401,
        'UNAUTHENTICATED',
      ]);
      expect(errorOf(await parley.call('GET', '/api/v1/actions', undefined, { authorization: 'Basic abc' }))).toEqual([
        401,
        'UNAUTHENTICATED',
      ]);
      for (const path of ['/health', '/health/ready', '/metrics']) {
        const res = await fetch(parley.url + path);
        expect([path, res.status]).toEqual([path, 200]);
        await res.text();
      }
    });

    it('refuses a start whose metadata is over METADATA_MAX_BYTES with PAYLOAD_TOO_LARGE, over HTTP and NATS, and records nothing', async () => {
      const limit = parley.config.eventStore.maxMetadataBytes;
      const metadataOf = (bytes: number) => ({ note: 'x'.repeat(bytes - '{"note":""}'.length) });
      const store = parley.app.get<EventStore>(EVENT_STORE);
      const tooLarge = randomUUID();
      const refused = await parley.call(
        'POST',
        '/api/v1/conversations',
        { agentCode: 'HELPDESK', actionCode: 'CHAT', conversationId: tooLarge, metadata: metadataOf(limit + 1) },
        bearer(alice),
      );
      expect(errorOf(refused)).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      expect(refused.body.error.details).toEqual({ field: 'metadata', limit, actual: limit + 1 });
      const overNats = await natsCall(
        nc,
        parley,
        'cmd.startConversation',
        { agentCode: 'HELPDESK', actionCode: 'CHAT', conversationId: tooLarge, metadata: metadataOf(limit + 1) },
        alice,
      );
      expect(overNats.error.code).toBe('PAYLOAD_TOO_LARGE');
      await expect(store.readStream(streamIdOf(tooLarge))).rejects.toMatchObject({ name: 'StreamNotFound' });

      const atLimit = await parley.call(
        'POST',
        '/api/v1/conversations',
        { agentCode: 'HELPDESK', actionCode: 'CHAT', metadata: metadataOf(limit) },
        bearer(alice),
      );
      expect(atLimit.status).toBe(201);
    });

    it('applies the same rules to a NATS command and a NATS query', async () => {
      const start = { agentCode: 'HELPDESK', actionCode: 'CHAT' };
      expect((await natsCall(nc, parley, 'cmd.startConversation', start)).error.code).toBe('UNAUTHENTICATED');
      expect((await natsCall(nc, parley, 'cmd.startConversation', start, 'pk_wrong')).error.code).toBe(
        'UNAUTHENTICATED',
      );
      expect((await natsCall(nc, parley, 'cmd.startConversation', start, auditor)).error.code).toBe('FORBIDDEN');
      const started = await natsCall(nc, parley, 'cmd.startConversation', start, alice);
      const id = started.result.conversationId as string;
      expect(id).toEqual(expect.any(String));

      const kill = { conversationId: id };
      expect((await natsCall(nc, parley, 'cmd.killConversation', kill, alice)).error.code).toBe('FORBIDDEN');
      expect((await natsCall(nc, parley, 'cmd.killConversation', kill, auditor)).error.code).toBe('FORBIDDEN');

      const query = { conversationId: id, minPosition: started.result.position };
      expect((await natsCall(nc, parley, 'qry.findConversation', query)).error.code).toBe('UNAUTHENTICATED');
      expect((await natsCall(nc, parley, 'qry.findConversation', query, alice)).result).toMatchObject({
        llmProcessStatus: 'NS',
      });
      expect((await natsCall(nc, parley, 'qry.findConversation', query, auditor)).result).toMatchObject({
        llmProcessStatus: 'NS',
      });
      expect((await natsCall(nc, parley, 'qry.verifyConversation', { conversationId: id }, alice)).error).toBeDefined();
      expect(
        (await natsCall(nc, parley, 'qry.verifyConversation', { conversationId: id }, auditor)).result,
      ).toMatchObject({ ok: true });

      const killed = await natsCall(nc, parley, 'cmd.killConversation', kill, ADMIN_KEY);
      expect(killed.result).toMatchObject({ conversationId: id });
    });
  });

  describe('ownership isolation between two clients', () => {
    it('over HTTP: bob neither sees (404) nor commands (403) alice’s conversation, and each lists only their own', async () => {
      const mine = await start(alice);
      const theirs = await start(bob);
      const wait = `?minPosition=${maxPosition(mine.position, theirs.position)}`;

      const reads = [
        ...['', '/messages', '/pending-question', '/tool-calls'].map((path) => path + wait),
        ...['/events', '/state', '/stream'],
      ];
      for (const path of reads) {
        const res = await parley.call('GET', conv(mine.id, path), undefined, bearer(bob));
        expect([path, ...errorOf(res)]).toEqual([path, 404, 'NOT_FOUND']);
      }
      const unknown = await parley.call('GET', conv(randomUUID()), undefined, bearer(bob));
      const hidden = await parley.call('GET', conv(mine.id), undefined, bearer(bob));
      expect(Object.keys(hidden.body.error)).toEqual(Object.keys(unknown.body.error));

      const commands = [
        await parley.call('POST', conv(mine.id, '/messages'), { content: 'hijack' }, bearer(bob)),
        await parley.call('POST', conv(mine.id, '/answers'), { answers: { a: 'b' } }, bearer(bob)),
        await parley.call('POST', conv(mine.id, '/terminate'), {}, bearer(bob)),
      ];
      expect(commands.map(errorOf)).toEqual(commands.map(() => [403, 'FORBIDDEN']));
      const still = await parley.call('GET', conv(mine.id) + wait, undefined, bearer(alice));
      expect(still.body).toMatchObject({ conversationUuid: mine.id, llmProcessStatus: 'NS' });

      const listOf = async (key: string) =>
        (await parley.call('GET', `/api/v1/conversations${wait}&limit=100`, undefined, bearer(key))).body.items.map(
          (c: { conversationUuid: string }) => c.conversationUuid,
        );
      const aliceList = await listOf(alice);
      const bobList = await listOf(bob);
      expect(aliceList).toContain(mine.id);
      expect(aliceList).not.toContain(theirs.id);
      expect(bobList).toContain(theirs.id);
      expect(bobList).not.toContain(mine.id);
      expect(await listOf(auditor)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    });

    it('over NATS: bob gets {result: null} or NOT_FOUND on reads and FORBIDDEN on commands, and lists only his own', async () => {
      const mine = (
        await natsCall(nc, parley, 'cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, alice)
      ).result;
      const theirs = (
        await natsCall(nc, parley, 'cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, bob)
      ).result;
      const minPosition = maxPosition(mine.position, theirs.position);
      const about = { conversationId: mine.conversationId, minPosition };

      expect(await natsCall(nc, parley, 'qry.findConversation', about, bob)).toEqual({ result: null });
      expect((await natsCall(nc, parley, 'qry.findConversation', about, alice)).result).toMatchObject({
        llmProcessStatus: 'NS',
      });
      for (const [method, query] of [
        ['getConversationMessages', about],
        ['getToolCalls', about],
        ['getEvents', { conversationId: mine.conversationId }],
      ] as const) {
        const res = await natsCall(nc, parley, `qry.${method}`, query, bob);
        expect([method, res.result ?? null, res.error?.code]).toEqual([method, null, 'NOT_FOUND']);
      }
      const send = { conversationId: mine.conversationId, content: 'hijack' };
      expect((await natsCall(nc, parley, 'cmd.sendMessage', send, bob)).error.code).toBe('FORBIDDEN');
      const terminate = { conversationId: mine.conversationId };
      expect((await natsCall(nc, parley, 'cmd.terminateConversation', terminate, bob)).error.code).toBe('FORBIDDEN');

      const listOf = async (key: string) =>
        (await natsCall(nc, parley, 'qry.listConversations', { minPosition, limit: 100 }, key)).result.items.map(
          (c: { conversationUuid: string }) => c.conversationUuid,
        );
      const bobList = await listOf(bob);
      expect(bobList).toContain(theirs.conversationId);
      expect(bobList).not.toContain(mine.conversationId);
      expect(await listOf(alice)).not.toContain(theirs.conversationId);
    });
  });

  it('refuses a client a model that is neither its own, instance-wide nor shared with it, until an admin shares it', async () => {
    const model = (await parley.call('GET', '/api/v1/catalog/models/SIM-CHAT')).body;
    const privateModel = { ...model, owner: 'alice', instanceWide: false };
    expect((await parley.call('PUT', '/api/v1/catalog/models/SIM-CHAT', privateModel)).status).toBe(200);
    try {
      const startAs = (key: string) =>
        parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, bearer(key));
      const refused = await startAs(bob);
      expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
        403,
        'FORBIDDEN',
        { model: 'SIM-CHAT' },
      ]);
      expect((await startAs(alice)).status).toBe(201);

      expect((await parley.call('PUT', '/api/v1/catalog/models/SIM-CHAT/acl/bob', { permission: 'read' })).status).toBe(
        200,
      );
      expect((await startAs(bob)).status).toBe(201);
      expect(
        (await parley.call('PUT', '/api/v1/catalog/models/SIM-CHAT/acl/bob', { permission: 'read' }, bearer(bob)))
          .status,
      ).toBe(403);
    } finally {
      await parley.call('PUT', '/api/v1/catalog/models/SIM-CHAT', model);
    }
  });
});

describe('rate limit through the assembled app', () => {
  const LIMIT = 5;
  let parley: ParleyUnderTest;
  let nc: NatsConnection;
  beforeAll(async () => {
    parley = await startParley('rate_limit', { RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    nc = await connect({ servers: '127.0.0.1:4222' });
  });
  afterAll(async () => {
    await nc.close();
    await parley.close();
  });

  it('answers the request after the limit with 429 RATE_LIMITED and Retry-After, per subject and across HTTP and NATS', async () => {
    const carol = await createKey(parley, 'carol', ['client']);
    const dave = await createKey(parley, 'dave', ['client']);
    for (let i = 0; i < LIMIT; i++) {
      const ok = await parley.call('GET', '/api/v1/actions', undefined, bearer(carol));
      expect([i, ok.status]).toEqual([i, 200]);
    }
    const limited = await parley.call('GET', '/api/v1/actions', undefined, bearer(carol));
    expect(errorOf(limited)).toEqual([429, 'RATE_LIMITED']);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body.error.details).toMatchObject({ limitPerMinute: LIMIT, retryAfterSeconds: retryAfter });

    expect((await natsCall(nc, parley, 'qry.getAllActions', {}, carol)).error.code).toBe('RATE_LIMITED');
    expect((await parley.call('GET', '/api/v1/actions', undefined, bearer(dave))).status).toBe(200);
    const health = await fetch(`${parley.url}/health`);
    expect(health.status).toBe(200);
    await health.text();
  });

  it('counts a turn command like any request: over the limit it gets 429 with Retry-After (RATE_LIMITED over NATS), appends nothing and keeps no turn slot', async () => {
    const erin = await createKey(parley, 'erin', ['client']);
    const { id } = await startAs(parley, erin);
    const send = () => parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'Hello' }, bearer(erin));
    expect((await send()).status).toBe(200);
    for (let i = 2; i < LIMIT; i++) expect((await send()).status).toBe(200);
    const store = parley.app.get<EventStore>(EVENT_STORE);
    const before = (await store.readStream(`conversation-${id}`)).length;

    const limited = await send();

    expect(errorOf(limited)).toEqual([429, 'RATE_LIMITED']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body.error.details).toMatchObject({ limitPerMinute: LIMIT });
    const overNats = await natsCall(nc, parley, 'cmd.sendMessage', { conversationId: id, content: 'Hello' }, erin);
    expect(overNats.error.code).toBe('RATE_LIMITED');
    expect((await store.readStream(`conversation-${id}`)).length).toBe(before);
    const redis = parley.app.get<Redis>(REDIS);
    expect(await redis.zcard(`${parley.config.prefix}:turn-slots:erin`)).toBe(0);
  });

  const errorOf = (res: { status: number; body: any }) => [res.status, res.body?.error?.code];
});

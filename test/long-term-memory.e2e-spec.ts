import { fold, type ConversationEnvelope, type ExistingConversation } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import type { RecordedRequest } from '@parley/testing';
import { buildMessages } from '@parley/turn';
import { connect, headers } from 'nats';
import { ADMIN_KEY, natsCall, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const FACT = 'my favourite colour is teal';
const QUESTION = 'What is my favourite colour?';
const RECALLED_LABEL = 'Facts remembered from earlier conversations (long-term memory):';

/** The test catalog with an embedding model and actions with long-term memory. */
function memoryCatalog(simUrl: string) {
  const catalog = testCatalog(simUrl);
  const action = (code: string, extra: Record<string, unknown>) => ({
    code,
    description: `Memory action ${code}`,
    llmModel: 'SIM-CHAT',
    llmConfiguration: 'TEST',
    llmMemoryStrategy: 'FULL',
    llmActionPrompt: 'Answer briefly.',
    ...extra,
  });
  return {
    ...catalog,
    models: [
      ...catalog.models,
      {
        code: 'SIM-EMBED',
        description: 'Embedding model',
        llmModelName: 'sim-embed',
        llmProvider: 'SIM',
        modelType: 'embedding',
        instanceWide: true,
      },
    ],
    actions: [
      ...catalog.actions,
      action('LTM', { longTermMemory: true, autoRecall: true }),
      action('LTM-TOOLS', { longTermMemory: true }),
    ],
  };
}

type SimChatRequest = NonNullable<RecordedRequest['body']>;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const text = (m: { content?: unknown }) =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
const promptHas = (r: SimChatRequest, needle: string) => r.messages.some((m) => text(m).includes(needle));
const lastUser = (r: SimChatRequest) => text(r.messages.findLast((m) => m.role === 'user') ?? {});

describe('long-term memory: remembered in one conversation, recalled in another of the same user only', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    parley = await startParley('long_term_memory', {}, memoryCatalog);
    store = parley.app.get(EVENT_STORE);
    alice = (await parley.call('POST', '/api/v1/keys', { subject: 'alice', roles: ['client'] })).body.key;
    bob = (await parley.call('POST', '/api/v1/keys', { subject: 'bob', roles: ['client'] })).body.key;
  });
  afterAll(() => parley?.close());
  beforeEach(() => {
    parley.simulator.reset();
    parley.simulator.setLatency(0);
    // The simulated model: asked to remember, it calls `remember`; asked a question, it answers
    // from the recalled facts in its prompt, or says it does not know.
    parley.simulator.script([
      {
        when: { predicate: (r) => /^Please remember/.test(lastUser(r)), noToolResult: true },
        reply: (r) => ({
          toolCalls: [{ name: 'remember', arguments: JSON.parse(lastUser(r).slice('Please remember '.length)) }],
        }),
      },
      {
        when: { predicate: (r) => /^Please recall/.test(lastUser(r)), noToolResult: true },
        reply: { toolCalls: [{ name: 'recall', arguments: { query: 'favourite colour' } }] },
      },
      { when: { toolResult: {} }, reply: { text: 'Done.' } },
      { when: { predicate: (r) => promptHas(r, 'colour is teal') }, reply: { text: 'Teal.' } },
      { reply: { text: "I don't know." } },
    ]);
  });

  const as = (key: string) => (method: string, path: string, body?: unknown) =>
    parley.call(method, path, body, bearer(key));
  const start = async (key: string, userId: string, actionCode = 'LTM') => {
    const res = await as(key)('POST', '/api/v1/conversations', {
      agentCode: 'HELPDESK',
      actionCode,
      metadata: { userId },
    });
    expect(res.status).toBe(201);
    return res.body.conversationId as string;
  };
  const say = async (key: string, id: string, content: string) => {
    const res = await as(key)('POST', `/api/v1/conversations/${id}/messages`, { content });
    expect(res.body).toMatchObject({ status: 'CO' });
    return res.body.reply as string;
  };
  const events = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const chatRequests = () => parley.simulator.requests.filter((r) => r.path.includes('chat')).map((r) => r.body!);
  const remember = (args: Record<string, unknown>) => `Please remember ${JSON.stringify(args)}`;

  it('recalls what u1 told one conversation in the next conversation of u1, never for u2 or another owner, and stops after a delete', async () => {
    const first = await start(alice, 'u1');
    expect(await say(alice, first, remember({ fact: FACT, importance: 0.8 }))).toBe('Done.');
    const [remembered] = await events(first, 'MemoryRemembered');
    expect(remembered).toMatchObject({ scope: 'user', scopeId: 'u1', text: FACT, importance: 0.8, updated: false });
    expect(Date.parse(remembered.expiresAt)).toBeGreaterThan(Date.now() + 300 * 86_400_000);
    const completed = (await events(first, 'ToolCallCompleted'))[0];
    expect(completed.output).toBe(`Remembered (user): ${FACT}`);

    // A second conversation of the same user: recalled before the model call, and in its prompt.
    const second = await start(alice, 'u1');
    expect(await say(alice, second, QUESTION)).toBe('Teal.');
    const prompt = chatRequests().at(-1)!;
    expect(prompt.messages.map(text)).toContain(`${RECALLED_LABEL}\n- ${FACT}`);
    const [recalled] = await events(second, 'MemoriesRecalled');
    expect(recalled).toMatchObject({
      auto: true,
      query: QUESTION,
      hits: [{ memoryId: remembered.memoryId, scope: 'user', text: FACT, importance: 0.8 }],
    });
    expect(recalled.hits[0].similarity).toBeGreaterThan(0.5);
    // Replay: the stream up to the model call gives its prompt again, without a search or a model.
    const requestsBefore = parley.simulator.requests.length;
    const stream = await store.readStream(`conversation-${second}`);
    const lastCall = stream.findLastIndex((e) => e.type === 'ModelCallStarted');
    const replayed = fold(stream.slice(0, lastCall) as unknown as ConversationEnvelope[]) as ExistingConversation;
    expect(buildMessages(replayed)).toEqual(prompt.messages.map((m) => ({ role: m.role, content: m.content })));
    expect(parley.simulator.requests).toHaveLength(requestsBefore);
    expect(recalled.hits[0].score).toBeCloseTo(recalled.hits[0].similarity * (0.75 + 0.25 * 0.8) * 0.9, 3);

    // Another user of the same owner, and another owner with the same user id: nothing.
    for (const [key, userId] of [
      [alice, 'u2'],
      [bob, 'u1'],
    ]) {
      const other = await start(key, userId);
      expect(await say(key, other, QUESTION)).toBe("I don't know.");
      expect(await events(other, 'MemoriesRecalled')).toMatchObject([{ auto: true, hits: [] }]);
      expect(promptHas(chatRequests().at(-1)!, FACT)).toBe(false);
    }

    // The routes: alice lists and searches hers, bob sees none and cannot delete hers.
    const listed = await as(alice)('GET', '/api/v1/memories?userId=u1');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      items: [{ id: remembered.memoryId, owner: 'alice', scope: 'user', scopeId: 'u1', text: FACT }],
      nextCursor: null,
    });
    const searched = await as(alice)('GET', `/api/v1/memories?q=${encodeURIComponent('favourite colour')}`);
    expect(searched.body.items.map((m: any) => m.text)).toEqual([FACT]);
    expect(searched.body.items[0].score).toBeGreaterThan(0);
    expect((await as(bob)('GET', '/api/v1/memories')).body).toEqual({ items: [], nextCursor: null });
    expect((await as(bob)('GET', `/api/v1/memories/${remembered.memoryId}`)).status).toBe(404);
    const bobDelete = await as(bob)('DELETE', `/api/v1/memories/${remembered.memoryId}`);
    expect(bobDelete.status).toBe(404);
    expect(bobDelete.body.error.code).toBe('NOT_FOUND');
    expect((await as(bob)('DELETE', '/api/v1/memories?userId=u1')).body).toEqual({ deleted: 0 });
    expect((await as(alice)('GET', `/api/v1/memories/${remembered.memoryId}`)).body.text).toBe(FACT);
    // Every embedding (the remember, each recall, the search) is counted like the model's tokens.
    const metrics = await (await fetch(`${parley.url}/metrics`)).text();
    expect(metrics).toMatch(/llm_token_usage\{[^}]*model="sim-embed"[^}]*direction="embedding"[^}]*\} [1-9]/);
    // The admin sees every owner's.
    expect((await parley.call('GET', '/api/v1/memories?owner=alice')).body.items).toHaveLength(1);

    // Deleted, the fact is recalled no more.
    expect((await as(alice)('DELETE', '/api/v1/memories?scope=user&scopeId=u1')).body).toEqual({ deleted: 1 });
    expect((await as(alice)('DELETE', `/api/v1/memories/${remembered.memoryId}`)).status).toBe(404);
    const third = await start(alice, 'u1');
    expect(await say(alice, third, QUESTION)).toBe("I don't know.");
    expect(await events(third, 'MemoriesRecalled')).toMatchObject([{ hits: [] }]);
  });

  it('the recall tool finds the user’s facts and the model reads them as the tool’s result; remembering again refreshes the fact', async () => {
    const first = await start(alice, 'u7', 'LTM-TOOLS');
    await say(alice, first, remember({ fact: FACT, importance: 0.2 }));
    await say(alice, first, remember({ fact: FACT, importance: 0.9, scope: 'user' }));
    const remembered = await events(first, 'MemoryRemembered');
    expect(remembered.map((r) => [r.updated, r.importance])).toEqual([
      [false, 0.2],
      [true, 0.9],
    ]);
    expect(remembered[1].memoryId).toBe(remembered[0].memoryId);
    await say(alice, first, remember({ fact: 'this conversation is about paint', scope: 'session' }));

    const second = await start(alice, 'u7', 'LTM-TOOLS');
    expect(await events(second, 'MemoriesRecalled')).toEqual([]);
    expect(await say(alice, second, 'Please recall')).toBe('Done.');
    const [recalled] = await events(second, 'MemoriesRecalled');
    expect(recalled).toMatchObject({ auto: false, query: 'favourite colour', hits: [{ text: FACT, scope: 'user' }] });
    expect(recalled.hits).toHaveLength(1); // the other conversation's session fact stays there
    const toolMessage = chatRequests()
      .at(-1)!
      .messages.find((m) => m.role === 'tool')!;
    expect(text(toolMessage)).toContain(`[user] ${FACT}`);
    const listed = await as(alice)('GET', '/api/v1/memories?scope=session');
    expect(listed.body.items).toMatchObject([
      { scope: 'session', scopeId: first, text: 'this conversation is about paint' },
    ]);
    const sessionExpiry = Date.parse(listed.body.items[0].expiresAt) - Date.parse(listed.body.items[0].createdAt);
    expect(Math.round(sessionExpiry / 86_400_000)).toBe(30);
  });

  it('refuses bad remember arguments as data the model reads, and stores nothing', async () => {
    const id = await start(alice, 'u9', 'LTM-TOOLS');
    await say(alice, id, remember({ fact: '  ' }));
    await say(alice, id, remember({ fact: 'x'.repeat(2001) }));
    await say(alice, id, remember({ fact: 'fine', scope: 'planet' }));
    await say(alice, id, remember({ fact: 'fine', importance: 2 }));
    const failed = await events(id, 'ToolCallFailed');
    expect(failed.map((f) => [f.code, f.message])).toEqual([
      ['INVALID_ARGUMENTS', 'fact: expected a non-empty string.'],
      ['INVALID_ARGUMENTS', 'fact: at most 2000 characters (got 2001).'],
      ['INVALID_ARGUMENTS', 'scope: expected one of session, user, agent, organisation.'],
      ['INVALID_ARGUMENTS', 'importance: expected a number from 0 to 1.'],
    ]);
    expect(await events(id, 'MemoryRemembered')).toEqual([]);
    expect((await as(alice)('GET', '/api/v1/memories?userId=u9')).body.items).toEqual([]);
  });

  it('goes on without memory while the embedding provider is down: the recall records its error, remember fails as data', async () => {
    const embedModel = (llmProvider: string) => ({
      code: 'SIM-EMBED',
      description: 'Embedding model',
      llmModelName: 'sim-embed',
      llmProvider,
      modelType: 'embedding',
      instanceWide: true,
    });
    const down = {
      code: 'DOWN',
      description: 'Nothing listens here',
      providerType: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-down',
      instanceWide: true,
    };
    const applied = await parley.call('POST', '/api/v1/catalog/apply', {
      providers: [down],
      models: [embedModel('DOWN')],
    });
    expect(applied.status).toBe(200);
    try {
      const id = await start(alice, 'u5');
      expect(await say(alice, id, QUESTION)).toBe("I don't know.");
      const [recalled] = await events(id, 'MemoriesRecalled');
      expect(recalled).toMatchObject({ auto: true, query: QUESTION, hits: [], error: expect.any(String) });
      expect(await say(alice, id, remember({ fact: FACT }))).toBe('Done.');
      expect(await events(id, 'ToolCallFailed')).toMatchObject([
        {
          name: 'remember',
          code: 'UNAVAILABLE',
          message: expect.stringContaining('Long-term memory could not be reached'),
        },
      ]);
      expect(await events(id, 'MemoryRemembered')).toEqual([]);
    } finally {
      await parley.call('POST', '/api/v1/catalog/apply', { models: [embedModel('SIM')] });
    }
  }, 60_000);

  it('refuses bad route input with the field, and unknown or foreign ids with 404', async () => {
    const bad = await as(alice)('GET', '/api/v1/memories?scope=planet');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems: [{ path: 'scope' }] } });
    expect((await as(alice)('GET', '/api/v1/memories?limit=0')).body.error.details.problems[0].path).toBe('limit');
    expect((await as(alice)('GET', '/api/v1/memories?cursor=nope')).body.error.details.problems[0].path).toBe('cursor');
    const noScope = await as(alice)('DELETE', '/api/v1/memories');
    expect(noScope.status).toBe(400);
    expect(noScope.body.error.details.problems).toEqual([{ path: 'scope', message: expect.any(String) }]);
    expect((await as(alice)('DELETE', '/api/v1/memories?scope=user')).body.error.details.problems[0].path).toBe(
      'scopeId',
    );
    expect((await as(alice)('GET', '/api/v1/memories?owner=bob')).status).toBe(403);
    // Auditors read every owner's memories and delete none.
    const auditor = (await parley.call('POST', '/api/v1/keys', { subject: 'eve', roles: ['auditor'] })).body.key;
    expect((await as(auditor)('GET', '/api/v1/memories?owner=bob')).status).toBe(200);
    expect((await as(auditor)('DELETE', '/api/v1/memories?userId=u1')).status).toBe(403);
    expect((await as(alice)('DELETE', '/api/v1/memories/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await as(alice)('DELETE', '/api/v1/memories/not-an-id')).status).toBe(404);
    expect((await parley.call('GET', '/api/v1/memories?q=colour')).body.error.details.problems[0].path).toBe('owner');
  });

  it('answers the memory operations over NATS and JSON-RPC as over HTTP: each client its own, admins any, auditors read', async () => {
    const userId = 'u-doors';
    const first = await start(alice, userId, 'LTM-TOOLS');
    await say(alice, first, remember({ fact: 'alice likes green tea' }));
    await say(alice, first, remember({ fact: 'alice parks on level two' }));
    await say(alice, first, remember({ fact: 'alice reads at night' }));
    const bobs = await start(bob, userId, 'LTM-TOOLS');
    await say(bob, bobs, remember({ fact: 'bob likes black coffee' }));
    const [bobFact] = await events(bobs, 'MemoryRemembered');
    const nc = await connect({ servers: parley.config.nats.url! });
    try {
      const nats = (subject: string, payload: unknown, key: string) => natsCall(nc, parley, subject, payload, key);
      /** JSON-RPC 2.0 over HTTP (`POST /rpc`) or NATS (`<prefix>.rpc`). */
      const rpc = async (door: 'http' | 'nats', method: string, params: unknown, key: string) => {
        const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
        if (door === 'nats') {
          const h = headers();
          h.set('authorization', `Bearer ${key}`);
          const msg = await nc.request(`${parley.config.prefix}.rpc`, message, { headers: h, timeout: 10_000 });
          return JSON.parse(msg.string());
        }
        const res = await fetch(`${parley.url}/rpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer(key) },
          body: message,
        });
        return res.json() as Promise<any>;
      };
      const texts = (items: { text: string }[]) => items.map((m) => m.text).sort();

      // Listing: over NATS each client finds its own facts of the user only, as over HTTP.
      const aliceListed = await nats('qry.listMemories', { userId }, alice);
      expect(texts(aliceListed.result.items)).toEqual([
        'alice likes green tea',
        'alice parks on level two',
        'alice reads at night',
      ]);
      expect(aliceListed.result).toEqual((await as(alice)('GET', `/api/v1/memories?userId=${userId}`)).body);
      expect(texts((await nats('qry.listMemories', { userId }, bob)).result.items)).toEqual(['bob likes black coffee']);
      const page = await rpc('http', 'listMemories', { userId, limit: 1 }, alice);
      expect(page.result.items).toHaveLength(1);
      expect(page.result.nextCursor).toBe(page.result.items[0].id);
      // A search embeds its query where the query runs.
      const searched = await rpc('nats', 'listMemories', { q: 'green tea', userId }, alice);
      expect(searched.result.items[0]).toMatchObject({ text: 'alice likes green tea', score: expect.any(Number) });

      // Bob's fact: his to read and delete, never alice's; alice may not name him.
      expect((await nats('qry.getMemory', { memoryId: bobFact.memoryId }, alice)).result).toBeNull();
      expect((await nats('qry.getMemory', { memoryId: bobFact.memoryId }, bob)).result).toMatchObject({
        id: bobFact.memoryId,
        owner: 'bob',
      });
      expect((await nats('qry.listMemories', { owner: 'bob' }, alice)).error.code).toBe('FORBIDDEN');
      const foreign = await nats('cmd.deleteMemory', { memoryId: bobFact.memoryId }, alice);
      expect(foreign.error).toMatchObject({ code: 'NOT_FOUND' });
      const foreignRpc = await rpc('http', 'deleteMemory', { memoryId: bobFact.memoryId }, alice);
      expect(foreignRpc.error.data).toMatchObject({ code: 'NOT_FOUND' });
      expect((await as(bob)('GET', `/api/v1/memories/${bobFact.memoryId}`)).status).toBe(200);

      // Alice deletes one fact over JSON-RPC, one over HTTP (204, no body, as before), the rest of
      // her user's over NATS JSON-RPC.
      const hers = aliceListed.result.items as { id: string; text: string }[];
      const mine = hers.find((m) => m.text.includes('tea'))!;
      const parked = hers.find((m) => m.text.includes('parks'))!;
      const overHttp = await fetch(`${parley.url}/api/v1/memories/${parked.id}`, {
        method: 'DELETE',
        headers: bearer(alice),
      });
      expect(overHttp.status).toBe(204);
      expect(await overHttp.text()).toBe('');
      expect(await rpc('http', 'deleteMemory', { memoryId: mine.id }, alice)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: null,
      });
      expect((await as(alice)('GET', `/api/v1/memories/${mine.id}`)).status).toBe(404);
      expect((await rpc('nats', 'deleteMemories', { userId }, alice)).result).toEqual({ deleted: 1 });
      expect((await nats('qry.listMemories', { userId }, alice)).result.items).toEqual([]);
      expect(texts((await nats('qry.listMemories', { userId }, bob)).result.items)).toEqual(['bob likes black coffee']);

      // Bad input and roles, as over HTTP: a scope is required; auditors read every owner's and delete none.
      const noScope = await nats('cmd.deleteMemories', {}, bob);
      expect(noScope.error).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems: [{ path: 'scope' }] } });
      const auditor = (await parley.call('POST', '/api/v1/keys', { subject: 'audit-doors', roles: ['auditor'] })).body
        .key;
      expect(texts((await nats('qry.listMemories', { owner: 'bob', userId }, auditor)).result.items)).toEqual([
        'bob likes black coffee',
      ]);
      expect((await nats('cmd.deleteMemories', { owner: 'bob', userId }, auditor)).error.code).toBe('FORBIDDEN');
      // The admin may name the owner.
      expect((await nats('cmd.deleteMemories', { owner: 'bob', userId }, ADMIN_KEY)).result).toEqual({ deleted: 1 });
      expect((await nats('qry.listMemories', { userId }, bob)).result.items).toEqual([]);
    } finally {
      await nc.close();
    }
  });

  it('refuses an action with memory when no single embedding model can be chosen, naming the field', async () => {
    const res = await parley.call('POST', '/api/v1/catalog/apply?dryRun=true', {
      models: [
        {
          code: 'SIM-EMBED2',
          description: 'A second embedding model',
          llmModelName: 'sim-embed-2',
          llmProvider: 'SIM',
          modelType: 'embedding',
        },
      ],
      actions: [{ code: 'LTM2', description: 'x', llmModel: 'SIM-CHAT', autoRecall: true }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details.problems).toEqual([
      { path: 'actions[0].autoRecall', message: expect.stringContaining('MEMORY_EMBEDDING_MODEL') },
    ]);
  });
});

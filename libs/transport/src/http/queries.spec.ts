import { CatalogService } from '@parley/catalog';
import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { ConversationQueries, ProjectionsService } from '@parley/read-models';
import { snapshotFixture } from '@parley/testing';
import { connect, headers, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { conversationScript, toAppend } from '@parley/testing';
import { ADMIN_KEY, startReadSideApp, type ReadSideApp } from '../testing/read-side-app';

const bundle = parse(readFileSync(join(__dirname, '../../../../examples/catalog.yaml'), 'utf8')) as unknown;

describe('queries over HTTP and over NATS', () => {
  let side: ReadSideApp;
  let nc: NatsConnection;
  let store: EventStore;
  let clientKey: string;
  let position: string;
  const mine = randomUUID();
  const theirs = randomUUID();
  const waiting = randomUUID();

  const http = async (url: string, key = ADMIN_KEY, extra: Record<string, string> = {}) => {
    const res = await side.app
      .getHttpAdapter()
      .getInstance()
      .inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...extra } });
    return { status: res.statusCode, body: res.json() };
  };
  const nats = async (method: string, payload: unknown, key = ADMIN_KEY) => {
    const h = headers();
    h.set('authorization', `Bearer ${key}`);
    const data = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const reply = await nc.request(`${side.config.prefix}.qry.${method}`, new TextEncoder().encode(data), {
      headers: h,
      timeout: 5000,
    });
    return JSON.parse(new TextDecoder().decode(reply.data));
  };

  beforeAll(async () => {
    side = await startReadSideApp('queries', () => ({}), { NATS_MAX_PAYLOAD_BYTES: '2048' });
    nc = await connect({ servers: '127.0.0.1:4222' });
    store = side.app.get(EVENT_STORE);
    await side.app.get(CatalogService).apply(bundle, { dryRun: false });
    clientKey = await side.clientKey('client-a');
    const snapshot = snapshotFixture();
    await store.append(streamIdOf(mine), toAppend(conversationScript(mine, { snapshot, owner: 'client-a' })));
    await store.append(streamIdOf(theirs), toAppend(conversationScript(theirs, { snapshot, owner: 'client-b' })));
    const asking = conversationScript(waiting, { snapshot, owner: 'client-a', actionCode: 'TICKET' }).slice(0, 24);
    position = (await store.append(streamIdOf(waiting), toAppend(asking, new Date('2026-11-21T09:00:00Z')))).position;
    // The app waits only 400 ms for a minPosition (so the timeout case is quick); on a busy machine
    // the projector's first catch-up can take longer, and every test below reads what it wrote.
    expect(await side.app.get(ProjectionsService).waitForPosition(position, 15_000)).toBe(true);
  });
  afterAll(async () => {
    await nc.close();
    await side.close();
  });

  it('reads its own writes with minPosition, and refuses a position from the future at once', async () => {
    const found = await http(`/api/v1/conversations/${waiting}?minPosition=${position}`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ conversationUuid: waiting, llmProcessStatus: 'WA', position });
    const viaNats = await nats('findConversation', { conversationId: waiting, minPosition: position });
    expect(viaNats.result.llmProcessStatus).toBe('WA');
    const future = await http(`/api/v1/conversations/${waiting}?minPosition=pg:999999999:1`);
    expect(future.status).toBe(400);
    expect(future.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: [{ path: 'minPosition' }] },
    });
    expect(
      (await nats('findConversation', { conversationId: waiting, minPosition: 'pg:999999999:1' })).error.code,
    ).toBe('VALIDATION_FAILED');
  });

  it('reads a conversation by one rule in single reads, lists and sub-resources: a subject without the client role sees none', async () => {
    const queries = side.app.get(ConversationQueries);
    const owner = { subject: 'client-a', roles: ['client' as const] };
    const roleless = { subject: 'client-a', roles: [] };
    expect(await queries.findConversation(owner, { conversationId: mine })).not.toBeNull();
    expect(await queries.findConversation(roleless, { conversationId: mine })).toBeNull();
    expect(await queries.getPendingQuestions(roleless, { conversationId: waiting })).toBeNull();
    await expect(queries.getToolCalls(roleless, { conversationId: mine })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await queries.listConversations(roleless, { limit: 50 } as never)).items).toEqual([]);
    expect((await queries.listConversations(owner, { limit: 50 } as never)).items.length).toBeGreaterThan(0);
  });

  it('answers the catalog queries, 404 over HTTP and {result: null} over NATS for unknown codes', async () => {
    const actions = await http('/api/v1/actions');
    expect(actions.body.map((a: { code: string }) => a.code)).toEqual(
      (await nats('getAllActions', {})).result.map((a: { code: string }) => a.code),
    );
    for (const [url, method, payload] of [
      ['/api/v1/actions/ANSWER', 'findActionByCode', { code: 'ANSWER' }],
      ['/api/v1/agents/HELPDESK', 'findAgentByCode', { code: 'HELPDESK' }],
      ['/api/v1/tools/ORDER_STATUS', 'findToolByCode', { code: 'ORDER_STATUS' }],
      ['/api/v1/mcp-clients/everything', 'findMcpClientByName', { name: 'everything' }],
    ] as const) {
      const viaHttp = await http(url);
      expect(viaHttp.status).toBe(200);
      expect((await nats(method, payload)).result).toEqual(viaHttp.body);
      const missing = await http(`${url.slice(0, url.lastIndexOf('/'))}/NOPE`);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('NOT_FOUND');
      expect(await nats(method, 'code' in payload ? { code: 'NOPE' } : { name: 'NOPE' })).toEqual({ result: null });
    }
  });

  it('finds a conversation with the seed fields, and hides it from a client that does not own it', async () => {
    const viaHttp = await http(`/api/v1/conversations/${mine}`, clientKey);
    expect(viaHttp.body).toMatchObject({
      conversationUuid: mine,
      llmAgent: 'HELPDESK',
      llmAction: 'ANSWER',
      llmProcessStatus: 'CO',
      llmFinishReason: 'ST',
      llmResponseModel: 'sim-chat-2026',
      biInputTokenCount: 609,
      biOutputTokenCount: 158,
      biEstimatedCost: 0.000615,
      llmErrorDetail: null,
    });
    expect((await nats('findConversation', { conversationId: mine }, clientKey)).result).toEqual(viaHttp.body);
    expect((await http(`/api/v1/conversations/${theirs}`, clientKey)).status).toBe(404);
    expect(await nats('findConversation', { conversationId: theirs }, clientKey)).toEqual({ result: null });
    expect(await nats('findConversation', { conversationId: randomUUID() })).toEqual({ result: null });
  });

  it('lists the messages in sequence, with attachments and tool-call ids', async () => {
    const viaHttp = await http(`/api/v1/conversations/${mine}/messages`);
    expect(viaHttp.body.map((m: { messageSequence: number }) => m.messageSequence)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    expect(viaHttp.body[0]).toMatchObject({
      llmMessageRole: 'US',
      llmMessageContent: 'Where is order 42?',
      biTokenCount: 6,
      attachments: [{ attachmentSequence: 1, llmMediaType: 'image/png', attachmentUrl: 'https://files.example/1.png' }],
    });
    expect(viaHttp.body[2]).toMatchObject({ llmMessageRole: 'TO', llmToolCallId: 'call-1', biTokenCount: null });
    expect(viaHttp.body[6]).toMatchObject({ llmMessageRole: 'QU', llmToolCallId: 'ask-1' });
    expect((await nats('getConversationMessages', { conversationId: mine })).result).toEqual(viaHttp.body);
    const foreign = await nats('getConversationMessages', { conversationId: theirs }, clientKey);
    expect(foreign.error.code).toBe('NOT_FOUND');
  });

  it('gives the pending question of a waiting conversation, and null once it is answered', async () => {
    const viaHttp = await http(`/api/v1/conversations/${waiting}/pending-question`);
    expect(viaHttp.body).toMatchObject({ conversationUuid: waiting, toolCallId: 'ask-1', sequence: 7 });
    expect(viaHttp.body.questions).toEqual([{ key: 'why', question: 'Why cancel?', required: true }]);
    expect((await nats('getPendingQuestions', { conversationId: waiting })).result).toEqual(viaHttp.body);
    expect((await http(`/api/v1/conversations/${mine}/pending-question`)).status).toBe(404);
    expect(await nats('getPendingQuestions', { conversationId: mine })).toEqual({ result: null });
  });

  it('lists tool calls and model calls of a conversation', async () => {
    const tools = await http(`/api/v1/conversations/${mine}/tool-calls`);
    expect(tools.body.map((t: { llmToolCallId: string; status: string }) => [t.llmToolCallId, t.status])).toEqual([
      ['call-1', 'completed'],
      ['ask-1', 'answered'],
      ['call-2', 'failed'],
    ]);
    expect((await nats('getToolCalls', { conversationId: mine })).result).toEqual(tools.body);
    const calls = await http(`/api/v1/conversations/${mine}/model-calls`);
    expect(calls.body[1]).toMatchObject({ turnNo: 1, callNo: 2, attempts: 2, status: 'completed', latencyMs: 250 });
    expect((await nats('getModelCalls', { conversationId: mine })).result).toEqual(calls.body);
  });

  it('lists conversations filtered and paged by cursor, only the own ones for a client', async () => {
    const first = await http('/api/v1/conversations?limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await http(`/api/v1/conversations?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ nextCursor: null });
    const all = [...first.body.items, ...second.body.items].map(
      (c: { conversationUuid: string }) => c.conversationUuid,
    );
    expect(new Set(all)).toEqual(new Set([mine, theirs, waiting]));
    const own = await nats('listConversations', { limit: 10 }, clientKey);
    expect(own.result.items.map((c: { conversationUuid: string }) => c.conversationUuid).sort()).toEqual(
      [mine, waiting].sort(),
    );
    const filtered = await http('/api/v1/conversations?status=WA&actionCode=TICKET');
    expect(filtered.body.items.map((c: { conversationUuid: string }) => c.conversationUuid)).toEqual([waiting]);
    expect((await http('/api/v1/conversations?from=2026-11-21T00:00:00Z')).body.items).toHaveLength(1);
    const bad = await http('/api/v1/conversations?cursor=not-a-cursor');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect((await nats('listConversations', { cursor: 'bm9wZQ' })).error.code).toBe('VALIDATION_FAILED');
  });

  it('filters the list by subject and text, and counts each status under the same filters', async () => {
    const ids = (body: { items: { conversationUuid: string }[] }) => body.items.map((c) => c.conversationUuid).sort();
    expect(ids((await http('/api/v1/conversations?subject=client-b')).body)).toEqual([theirs]);
    expect(ids((await http(`/api/v1/conversations?text=${theirs.slice(0, 8).toUpperCase()}`)).body)).toEqual([theirs]);
    expect(ids((await http('/api/v1/conversations?text=CLIENT-B')).body)).toEqual([theirs]);
    expect((await http('/api/v1/conversations?text=50%25_off')).body.items).toEqual([]);
    // A client naming another subject still sees only its own: none of client-b's.
    expect((await http('/api/v1/conversations?subject=client-b', clientKey)).body.items).toEqual([]);

    const all = await http('/api/v1/conversations/counts');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.byStatus.WA).toBe(1);
    const own = await nats('countConversations', { actionCode: 'TICKET' }, clientKey);
    expect(own.result).toEqual({ total: 1, byStatus: { WA: 1 } });
    expect((await http('/api/v1/conversations/counts?subject=client-b')).body.total).toBe(1);
    const bad = await http('/api/v1/conversations/counts?status=CO');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error)).toContain('status');
  });

  it("sums usage by day, subject, agent, action and model: everyone's for admins, its own for a client", async () => {
    const byAction = await http('/api/v1/usage?groupBy=action');
    // Latencies: every scripted model call took 250 ms.
    const figures = { latencyP50Ms: 250, latencyP95Ms: 250, embeddingTokens: 0, embeddingCost: 0 };
    expect(byAction.body).toEqual([
      {
        action: 'ANSWER',
        conversations: 2,
        turns: 4,
        errors: 2,
        modelCalls: 10,
        inputTokens: 1218,
        outputTokens: 316,
        estimatedCost: 0.00123,
        ...figures,
      },
      {
        action: 'TICKET',
        conversations: 1,
        turns: 1,
        errors: 1,
        modelCalls: 3,
        inputTokens: 364,
        outputTokens: 94,
        estimatedCost: 0.000369,
        ...figures,
      },
    ]);
    expect((await nats('getUsage', { groupBy: 'action' })).result).toEqual(byAction.body);
    const byDay = await http('/api/v1/usage?groupBy=day&from=2026-11-21');
    expect(byDay.body.map((r: { day: string }) => r.day)).toEqual(['2026-11-21']);
    expect((await http('/api/v1/usage?groupBy=model')).body[0]).toMatchObject({ model: 'SIM-CHAT', modelCalls: 13 });
    const bySubject = await http('/api/v1/usage?groupBy=subject');
    expect(bySubject.body.map((r: { subject: string; conversations: number }) => [r.subject, r.conversations])).toEqual(
      [
        ['client-a', 2],
        ['client-b', 1],
      ],
    );
    const bFiltered = await http('/api/v1/usage?groupBy=action&subject=client-b&model=SIM-CHAT');
    expect(bFiltered.body).toEqual([expect.objectContaining({ action: 'ANSWER', conversations: 1, modelCalls: 5 })]);
    expect((await http('/api/v1/usage?groupBy=action&agent=NOPE')).body).toEqual([]);
    // A client: only its own conversations (client-a's two), whatever it groups or filters by.
    const own = await http('/api/v1/usage?groupBy=subject', clientKey);
    expect(own.body).toEqual([expect.objectContaining({ subject: 'client-a', conversations: 2, modelCalls: 8 })]);
    const ownByAction = await nats('getUsage', { groupBy: 'action' }, clientKey);
    expect(
      ownByAction.result.map((r: { action: string; conversations: number }) => [r.action, r.conversations]),
    ).toEqual([
      ['ANSWER', 1],
      ['TICKET', 1],
    ]);
    expect((await http('/api/v1/usage?groupBy=subject&subject=client-a', clientKey)).body).toEqual(own.body);
    const foreign = await http('/api/v1/usage?groupBy=action&subject=client-b', clientKey);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('FORBIDDEN');
    expect((await nats('getUsage', { groupBy: 'day', subject: 'client-b' }, clientKey)).error.code).toBe('FORBIDDEN');
    expect((await http('/api/v1/usage?groupBy=week')).status).toBe(400);
  });

  it('answers bad NATS input with the error shape and keeps serving', async () => {
    expect((await nats('findConversation', '{not json')).error.code).toBe('VALIDATION_FAILED');
    expect((await nats('findConversation', { conversationId: 'nope' })).error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: [expect.objectContaining({ path: 'conversationId' })] },
    });
    expect((await nats('findConversation', { conversationId: mine, extra: 1 })).error.code).toBe('VALIDATION_FAILED');
    expect((await nats('findConversation', { conversationId: mine, pad: 'x'.repeat(3000) })).error.code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    expect((await nats('noSuchQuery', {})).error.code).toBe('NOT_FOUND');
    expect((await nats('findConversation', { conversationId: mine }, 'wrong')).error.code).toBe('UNAUTHENTICATED');
    expect((await nats('findConversation', { conversationId: mine })).result.conversationUuid).toBe(mine);
  });
});

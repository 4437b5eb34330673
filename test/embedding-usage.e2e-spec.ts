import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { Collections } from '@parley/knowledge';
import { PG_POOL } from '@parley/platform';
import { PROJECTIONS, rebuildProjections } from '@parley/read-models';
import { putDocuments, type RecordedRequest } from '@parley/testing';
import type { Pool } from 'pg';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** Per embedding token: the simulator reports one token a word. */
const EMBEDDING_PRICE = 0.0000001;

/** The test catalog with a priced embedding model, a collection, and actions on it and on long-term memory. */
function embeddingCatalog(simUrl: string) {
  const catalog = testCatalog(simUrl);
  const action = (code: string, extra: Record<string, unknown>) => ({
    code,
    description: `Action ${code}`,
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
        code: 'EMB',
        llmModelName: 'sim-embed',
        llmProvider: 'SIM',
        modelType: 'embedding',
        llmInputTokenPrice: EMBEDDING_PRICE,
        instanceWide: true,
      },
    ],
    vectorStores: [{ code: 'KB', description: 'Knowledge base', llmEmbeddingModel: 'EMB' }],
    documentCollections: [{ code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.1 }],
    actions: [
      ...catalog.actions,
      action('RAG', { documents: ['FAQ'] }),
      action('LTM', { longTermMemory: true, autoRecall: true }),
    ],
  };
}

type SimChatRequest = NonNullable<RecordedRequest['body']>;
const lastUser = (r: SimChatRequest) => String(r.messages.findLast((m) => m.role === 'user')?.content ?? '');
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** The simulator's embedding tokens: one a word. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const QUESTION = 'How long does the Zephyr kettle warranty last?';
const FACT = 'my favourite colour is teal';
const REMEMBER = 'Please remember my colour';
const RECALL = 'Please recall it';
const RECALL_QUERY = 'favourite colour';

describe('usage counts the embedding calls of conversations: retrieval, remember and recall', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let alice: string;
  let bob: string;
  let last: string;
  let ragConversation: string;
  let memoryConversation: string;

  const as = (key: string) => (method: string, path: string, body?: unknown) =>
    parley.call(method, path, body, bearer(key));
  const usage = (query: string, key?: string) =>
    parley.call(
      'GET',
      `/api/v1/usage?${query}&minPosition=${encodeURIComponent(last)}`,
      undefined,
      key ? bearer(key) : {},
    );
  const events = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const start = async (key: string, actionCode: string) =>
    (await as(key)('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode, metadata: { userId: 'u1' } }))
      .body.conversationId as string;
  const say = async (key: string, id: string, content: string) => {
    const turn = await as(key)('POST', `/api/v1/conversations/${id}/messages`, { content });
    expect(turn.body).toMatchObject({ status: 'CO' });
    last = turn.body.position as string;
  };

  beforeAll(async () => {
    parley = await startParley('embedding_usage', {}, embeddingCatalog);
    store = parley.app.get(EVENT_STORE);
    const key = async (subject: string) =>
      (await parley.call('POST', '/api/v1/keys', { subject, roles: ['client'] })).body.key as string;
    alice = await key('alice');
    bob = await key('bob');
    await putDocuments(parley.app.get(Collections), 'FAQ', [
      {
        documentId: 'kettle',
        title: 'Kettle manual',
        chunks: ['The Zephyr kettle warranty lasts seven years.', 'Descale the kettle monthly.'],
      },
    ]);
    parley.simulator.setLatency(0);
    parley.simulator.script([
      {
        when: { predicate: (r) => /^Please remember/.test(lastUser(r)), noToolResult: true },
        reply: { toolCalls: [{ name: 'remember', arguments: { fact: FACT } }] },
      },
      {
        when: { predicate: (r) => /^Please recall/.test(lastUser(r)), noToolResult: true },
        reply: { toolCalls: [{ name: 'recall', arguments: { query: RECALL_QUERY } }] },
      },
      { reply: { text: 'Done.' } },
    ]);
    // Alice asks a question of the documents; Bob has a fact remembered, then recalled.
    ragConversation = await start(alice, 'RAG');
    await say(alice, ragConversation, QUESTION);
    memoryConversation = await start(bob, 'LTM');
    await say(bob, memoryConversation, REMEMBER);
    await say(bob, memoryConversation, RECALL);
  });
  afterAll(() => parley?.close());

  it('adds each conversation’s embedding tokens and cost to its owner’s usage, under the embedding model', async () => {
    // What the events recorded: one search; two automatic recalls, a remember and a recall.
    const searches = (await events(ragConversation, 'ContextRetrieved')).flatMap((e) => e.searches);
    const aliceTokens = words(QUESTION);
    expect(searches).toEqual([expect.objectContaining({ collection: 'FAQ', model: 'EMB', tokens: aliceTokens })]);
    const remembered = await events(memoryConversation, 'MemoryRemembered');
    const recalled = await events(memoryConversation, 'MemoriesRecalled');
    expect(remembered.map((e) => e.embedding)).toEqual([
      { model: 'EMB', tokens: words(FACT), cost: expect.closeTo(words(FACT) * EMBEDDING_PRICE, 15) },
    ]);
    // The automatic recall of each turn embeds the user's message; the recall tool its query.
    expect(recalled.map((e) => [e.auto, e.embedding.tokens])).toEqual([
      [true, words(REMEMBER)],
      [true, words(RECALL)],
      [false, words(RECALL_QUERY)],
    ]);
    const bobTokens = words(FACT) + words(REMEMBER) + words(RECALL) + words(RECALL_QUERY);

    const mine = await usage('groupBy=subject', alice);
    expect(mine.body).toEqual([
      expect.objectContaining({
        subject: 'alice',
        embeddingTokens: aliceTokens,
        embeddingCost: expect.closeTo(aliceTokens * EMBEDDING_PRICE, 15),
      }),
    ]);
    // The total cost holds the chat calls' and the embedding calls'.
    const chatOnly = (await usage('groupBy=model&model=SIM-CHAT', alice)).body[0];
    expect(chatOnly).toMatchObject({ model: 'SIM-CHAT', embeddingTokens: 0, embeddingCost: 0 });
    expect(mine.body[0].estimatedCost).toBeCloseTo(chatOnly.estimatedCost + aliceTokens * EMBEDDING_PRICE, 12);

    const byModel = await usage('groupBy=model');
    expect(byModel.body).toEqual([
      expect.objectContaining({
        model: 'EMB',
        conversations: 0,
        modelCalls: 0,
        inputTokens: 0,
        embeddingTokens: aliceTokens + bobTokens,
        embeddingCost: expect.closeTo((aliceTokens + bobTokens) * EMBEDDING_PRICE, 15),
        estimatedCost: expect.closeTo((aliceTokens + bobTokens) * EMBEDDING_PRICE, 15),
        latencyP50Ms: null,
      }),
      expect.objectContaining({ model: 'SIM-CHAT', conversations: 2, embeddingTokens: 0, embeddingCost: 0 }),
    ]);
    const his = await usage('groupBy=action', bob);
    expect(his.body).toEqual([expect.objectContaining({ action: 'LTM', embeddingTokens: bobTokens })]);
  });

  it('describes the embedding fields of usage in the OpenAPI document', async () => {
    const doc = (await parley.call('GET', '/docs-json')).body;
    const row = doc.paths['/api/v1/usage'].get.responses['200'].content['application/json'].schema.items;
    expect(row.properties).toMatchObject({ embeddingTokens: { type: 'number' }, embeddingCost: { type: 'number' } });
    expect(row.required).toEqual(expect.arrayContaining(['embeddingTokens', 'embeddingCost', 'estimatedCost']));
  });

  it('gives the same embedding usage after the read models are rebuilt from the events', async () => {
    const before = (await usage('groupBy=subject')).body;
    await rebuildProjections(parley.app.get<Pool>(PG_POOL), store, PROJECTIONS);
    expect((await usage('groupBy=subject')).body).toEqual(before);
  });
});

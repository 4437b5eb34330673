import { fold, type ConversationEnvelope, type ExistingConversation } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { Collections } from '@parley/knowledge';
import { PG_POOL } from '@parley/platform';
import { PROJECTIONS, rebuildProjections } from '@parley/read-models';
import type { Pool } from 'pg';
import { CONTEXT_HEADER, countPromptTokens } from '@parley/prompt';
import { putDocuments, type RecordedRequest } from '@parley/testing';
import { buildMessages } from '@parley/turn';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * The test catalog with an embedding model, a vector store and three collections: FAQ (top 4
 * above 0.1), TOP1 (one chunk, the same documents) and STRICT (a threshold nothing reaches);
 * actions on each (and one on two of them), one with a 180-token prompt budget, and one on a model whose context window
 * (450, less the 256 the reply may take) is the only budget.
 */
function retrievalCatalog(simUrl: string) {
  const catalog = testCatalog(simUrl);
  const action = (code: string, extra: Record<string, unknown>) => ({
    code,
    description: `Retrieval action ${code}`,
    llmModel: 'SIM-CHAT',
    llmConfiguration: 'TEST',
    llmMemoryStrategy: 'FULL',
    llmActionPrompt: 'Answer from the documents when they apply.',
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
        llmInputTokenPrice: 0.0000001,
        instanceWide: true,
      },
      { ...catalog.models[0], code: 'SIM-SMALL', llmContextWindow: 450 },
    ],
    configurations: [...catalog.configurations, { ...catalog.configurations[0], code: 'TGHT', maxPromptTokens: 180 }],
    vectorStores: [{ code: 'KB', description: 'Knowledge base', llmEmbeddingModel: 'EMB' }],
    documentCollections: [
      { code: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.1, llmResultCount: 4 },
      { code: 'TOP1', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.1, llmResultCount: 1 },
      { code: 'STRICT', llmVectorStore: 'KB', collectionName: 'faq', llmSimilarityThreshold: 0.99 },
    ],
    actions: [
      ...catalog.actions,
      action('RAG', { documents: ['FAQ'] }),
      action('RAG1', { documents: ['TOP1'] }),
      action('RAGS', { documents: ['STRICT'] }),
      // The tight budgets leave no room for AskUserQuestion's schema: these two opt out of it.
      action('RAGT', { documents: ['FAQ'], llmConfiguration: 'TGHT', askUserQuestion: false }),
      action('RAGW', { documents: ['FAQ'], llmModel: 'SIM-SMALL', askUserQuestion: false }),
      action('RAG2', { documents: ['TOP1', 'STRICT'] }),
    ],
  };
}

const WARRANTY = 'The Zephyr kettle warranty lasts seven years from the date of purchase.';
const DOCUMENTS = [
  {
    documentId: 'kettle-manual',
    title: 'Zephyr kettle manual',
    chunks: [
      'Fill the Zephyr kettle to the MAX line and press the switch once.',
      WARRANTY,
      'Warranty claims for the Zephyr kettle need the receipt and the serial number.',
      'Descale the kettle monthly with white vinegar.',
    ],
  },
  {
    documentId: 'toaster-manual',
    title: 'Nimbus toaster manual',
    chunks: ['The Nimbus toaster has six browning levels.', 'Crumb trays slide out from the back of the toaster.'],
  },
  {
    documentId: 'shipping',
    title: 'Shipping policy',
    chunks: ['Orders ship from Lisbon within two working days; a long line follows. '.repeat(6).trim()],
  },
];

type Msg = { role: string; content?: unknown };
const contextOf = (messages: Msg[]): string | undefined =>
  messages.find((m) => m.role === 'system' && String(m.content).startsWith(CONTEXT_HEADER))?.content as string;
const chatRequests = (parley: ParleyUnderTest): RecordedRequest[] =>
  parley.simulator.requests.filter((r) => r.path.endsWith('/chat/completions'));
const embeddingRequests = (parley: ParleyUnderTest) =>
  parley.simulator.requests.filter((r) => r.path.endsWith('/embeddings'));

describe('retrieval in turns: the action’s collections give the prompt a context block, and the answer its sources', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('retrieval', {}, retrievalCatalog);
    store = parley.app.get(EVENT_STORE);
    await putDocuments(parley.app.get(Collections), 'FAQ', DOCUMENTS);
  });
  afterAll(async () => {
    await parley?.close();
  });
  beforeEach(() => {
    parley.simulator.reset();
    parley.simulator.setLatency(0);
    // The model knows the warranty only when the context block right before the question holds it.
    parley.simulator.script([
      {
        reply: (request) => {
          const messages = request.messages as Msg[];
          const block = contextOf(messages);
          const i = messages.findIndex((m) => m.content === block);
          const knows = block?.includes(WARRANTY) && messages[i + 1]?.role === 'user';
          return { text: knows ? 'Seven years, says the Zephyr kettle manual.' : 'I do not know.' };
        },
      },
    ]);
  });

  const start = async (actionCode: string) =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const events = (id: string) => store.readStream(`conversation-${id}`);
  const retrieved = async (id: string) =>
    (await events(id)).filter((e) => e.type === 'ContextRetrieved').map((e) => e.data as any);

  it('answers a question only a document answers: the block holds the chunk, the reply and the messages name it, replay needs no search', async () => {
    const id = await start('RAG');
    const question = 'How many years does the Zephyr kettle warranty last?';
    const turn = await send(id, question);
    expect(turn.body).toMatchObject({ status: 'CO', reply: 'Seven years, says the Zephyr kettle manual.' });

    // The request: system prompt, then the labelled block, then the user message.
    const [request] = chatRequests(parley);
    const messages = request.body!.messages as Msg[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    const block = contextOf(messages)!;
    expect(block).toContain('[Source: Zephyr kettle manual (document kettle-manual, FAQ)]');
    expect(block).toContain(WARRANTY);
    expect(block).not.toContain('toaster');

    // What was retrieved is on record: query, chunks with ids, scores, text and tokens, the embedding call.
    const [data] = await retrieved(id);
    expect(data).toMatchObject({ turnNo: 1, query: question, context: block, dropped: [] });
    expect(data.searches).toEqual([
      expect.objectContaining({
        collection: 'FAQ',
        model: 'EMB',
        tokens: expect.any(Number),
        hits: data.chunks.length,
      }),
    ]);
    expect(data.searches[0].latencyMs).toBeGreaterThan(0);
    const warranty = data.chunks.find((c: any) => c.chunkId === 'kettle-manual#1');
    expect(warranty).toMatchObject({
      collection: 'FAQ',
      documentId: 'kettle-manual',
      title: 'Zephyr kettle manual',
      chunkIndex: 1,
      text: WARRANTY,
      tokens: expect.any(Number),
    });
    expect(data.chunks.length).toBeLessThanOrEqual(4);
    expect(data.chunks.every((c: any) => c.score >= 0.1)).toBe(true);
    // Adjacent chunks of the manual are one section, under one label.
    expect(data.blocks).toBeLessThan(data.chunks.length);
    expect(block.match(/Zephyr kettle manual \(document/g)).toHaveLength(1);

    // The reply's sources, in the turn reply and the messages read model.
    const sources = data.chunks.map(({ collection, documentId, chunkId, title, score }: any) => ({
      collection,
      documentId,
      chunkId,
      title,
      score,
    }));
    expect(turn.body.ragSources).toEqual(sources);
    const read = await parley.call(
      'GET',
      `/api/v1/conversations/${id}/messages?minPosition=${turn.body.position as string}`,
    );
    expect(read.body.map((m: any) => [m.llmMessageRole, m.ragSources])).toEqual([
      ['US', []],
      ['AS', sources],
    ]);
    // A rebuild of the read models from the stream gives the same rows, sources included.
    const pool = parley.app.get<Pool>(PG_POOL);
    const rows = async () =>
      (await pool.query('select * from rm_messages where conversation_id = $1 order by sequence', [id])).rows;
    const before = await rows();
    expect(before[1].rag_sources).toEqual(sources);
    await rebuildProjections(pool, parley.app.get(EVENT_STORE), PROJECTIONS);
    expect(await rows()).toEqual(before);

    // Replay: folding the stream up to the model call gives the same prompt, and nothing is searched.
    const stream = await events(id);
    const types = stream.map((e) => e.type);
    expect(types.indexOf('ContextRetrieved')).toBeLessThan(types.indexOf('ModelCallStarted'));
    const embeddingsBefore = embeddingRequests(parley).length;
    const at = stream.findIndex((e) => e.type === 'ModelCallStarted');
    const replayed = fold(stream.slice(0, at) as unknown as ConversationEnvelope[]) as ExistingConversation;
    expect(buildMessages(replayed).map((m) => ({ role: m.role, content: m.content }))).toEqual(
      messages.map((m) => ({ role: m.role, content: m.content })),
    );
    expect(embeddingRequests(parley)).toHaveLength(embeddingsBefore);

    // The next turn searches again for its own message; the last turn's block is not sent again.
    await send(id, 'Does the Nimbus toaster have browning levels?');
    const second = chatRequests(parley).at(-1)!.body!.messages as Msg[];
    const blocks = second.filter((m) => String(m.content).startsWith(CONTEXT_HEADER));
    expect(blocks).toHaveLength(1);
    expect(blocks[0].content).toContain('six browning levels');
    expect(second.indexOf(blocks[0])).toBe(second.length - 2);
    expect(await retrieved(id)).toHaveLength(2);
  });

  it('asks each collection for its own top-K above its threshold; with nothing found there is no block and no sources', async () => {
    const one = await start('RAG1');
    await send(one, 'How many years does the Zephyr kettle warranty last?');
    const [top1] = await retrieved(one);
    expect(top1.chunks.map((c: any) => c.chunkId)).toEqual(['kettle-manual#1']);

    // Every linked collection is searched, each with its own top-K and threshold.
    const both = await start('RAG2');
    await send(both, 'How many years does the Zephyr kettle warranty last?');
    const [two] = await retrieved(both);
    expect(two.searches.map((s: any) => [s.collection, s.hits])).toEqual([
      ['TOP1', 1],
      ['STRICT', 0],
    ]);
    expect(two.chunks.map((c: any) => [c.collection, c.chunkId])).toEqual([['TOP1', 'kettle-manual#1']]);

    const strict = await start('RAGS');
    const reply = await send(strict, 'How many years does the Zephyr kettle warranty last?');
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'I do not know.' });
    expect(reply.body.ragSources).toBeUndefined();
    const [none] = await retrieved(strict);
    expect(none).toMatchObject({ chunks: [], context: null, blocks: 0 });
    const messages = chatRequests(parley).at(-1)!.body!.messages as Msg[];
    expect(contextOf(messages)).toBeUndefined();
  });

  it('trims the block to the prompt budget, lowest scores first, and records what it dropped', async () => {
    for (const action of ['RAGT', 'RAGW']) {
      parley.simulator.reset();
      const id = await start(action);
      const turn = await send(id, 'Zephyr kettle warranty: how long, and do orders ship from Lisbon?');
      expect(turn.body.status).toBe('CO');
      const [data] = await retrieved(id);
      const budget = action === 'RAGT' ? 180 : 450 - 256;
      expect(data.budget).toMatchObject({ promptTokens: budget });
      expect(data.dropped.length).toBeGreaterThan(0);
      expect(data.dropped.every((d: any) => d.reason === 'budget')).toBe(true);
      const lowestKept = Math.min(...data.chunks.map((c: any) => c.score));
      expect(data.dropped.every((d: any) => d.score <= lowestKept)).toBe(true);
      // What the model got fits the budget.
      const body = chatRequests(parley).at(-1)!.body!;
      const messages = (body.messages as Msg[]).map((m) => ({ role: m.role, content: m.content as string }));
      expect(countPromptTokens(messages, body.tools ?? [], 'sim-chat')).toBeLessThanOrEqual(budget);
      expect(data.budget.withoutContext + data.budget.context).toBeLessThanOrEqual(budget);
    }
  });

  it('describes the sources in the OpenAPI document: the turn reply and the messages query', async () => {
    const doc = (await parley.call('GET', '/docs-json')).body;
    const source = { type: 'object', required: ['collection', 'documentId', 'chunkId', 'title', 'score'] };
    expect(doc.components.schemas.TurnReply.properties.ragSources).toMatchObject({
      type: 'array',
      items: expect.objectContaining(source),
    });
    const messages = doc.paths['/api/v1/conversations/{conversationId}/messages'].get.responses['200'];
    const item = messages.content['application/json'].schema.items;
    expect(item.properties.ragSources).toMatchObject({ type: 'array', items: expect.objectContaining(source) });
    expect(item.required).toContain('ragSources');
  });

  it('goes on without context when the embedding call fails, and records the error', async () => {
    parley.simulator.script([
      { when: { model: 'sim-embed' }, reply: { fail: { status: 400, message: 'bad embedding input' } } },
      { reply: { text: 'I do not know.' } },
    ]);
    const id = await start('RAG');
    const reply = await send(id, 'How many years does the Zephyr kettle warranty last?');
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'I do not know.' });
    const [data] = await retrieved(id);
    expect(data).toMatchObject({ chunks: [], context: null });
    expect(data.searches[0]).toMatchObject({ collection: 'FAQ', hits: 0, error: expect.stringContaining('400') });
  });

  it('fails the turn whose prompt without context is already over the budget', async () => {
    const id = await start('RAGT');
    const reply = await send(id, 'warranty '.repeat(200));
    expect(reply.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    const [data] = await retrieved(id);
    expect(data.chunks).toEqual([]);
    expect(data.dropped.length).toBeGreaterThan(0);
    expect(chatRequests(parley)).toHaveLength(0);
  });
});

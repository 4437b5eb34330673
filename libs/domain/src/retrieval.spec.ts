import { snapshotFixture } from '@parley/testing';
import { conversationDecider } from './conversation.decider';
import type { ContextRetrieved, ConversationEvent } from './conversation.events';
import { retrievalPlan } from './retrieval';
import { promptBudget, type RunningTurn } from './turn.rules';
import { nextTurnStep } from './turn.step';
import { at, call, fold, limits, replied, started, T0 } from './turn.fixtures';

const FAQ = { code: 'FAQ', topK: 4, threshold: 0.2 };

type Retrieved = Omit<ContextRetrieved['data'], 'turnNo'>;
const retrieved = (overrides: Partial<Retrieved> = {}): Retrieved => ({
  query: 'hi',
  searches: [{ collection: 'FAQ', model: 'EMB', tokens: 1, cost: 0, latencyMs: 2, searchMs: 1, hits: 1 }],
  chunks: [
    {
      collection: 'FAQ',
      documentId: 'refunds',
      chunkId: 'refunds#0',
      title: 'Refund policy',
      score: 0.9,
      chunkIndex: 0,
      text: 'Refunds take five days.',
      tokens: 5,
    },
  ],
  blocks: 1,
  dropped: [{ collection: 'FAQ', chunkId: 'other#2', documentId: 'other', score: 0.3, reason: 'budget' }],
  context: 'Below are relevant sections…\n\n[Source: Refund policy (document refunds, FAQ)]\nRefunds take five days.',
  budget: { promptTokens: 100, withoutContext: 40, context: 30 },
  ...overrides,
});

const withCollections = (...more: ConversationEvent[]) =>
  fold([...started({ collections: [FAQ] }), ...more]) as RunningTurn;

function record(c: RunningTurn, data = retrieved()): ConversationEvent[] {
  return conversationDecider.decide({ type: 'RecordContextRetrieved', data, meta: at(1) }, c);
}

describe('retrieval in a turn: when the turn searches', () => {
  it('searches before the first model call when the action links collections, for the user message', () => {
    const c = withCollections();
    expect(nextTurnStep(c, T0)).toEqual({
      kind: 'retrieve',
      plan: { turnNo: 1, query: 'hi', collections: [FAQ], promptTokens: null, deadline: expect.any(Number) },
    });
    expect(nextTurnStep(fold(started()), T0).kind).toBe('call_model');
  });

  it('searches once a turn: not again after the search is on record, nor after a model call', () => {
    const c = withCollections();
    const after = fold([...started({ collections: [FAQ] }), ...record(c)]) as RunningTurn;
    expect(after.turn.context?.text).toContain('Refunds take five days.');
    expect(nextTurnStep(after, T0).kind).toBe('call_model');
    expect(retrievalPlan(withCollections(...replied(2, [call('t1', 'lookup')])))).toBeNull();
  });

  it('does not search a turn without a user message text', () => {
    const [start, , turn] = started({ collections: [FAQ] });
    const blank: ConversationEvent = {
      type: 'MessageRecorded',
      data: { sequence: 1, role: 'US', content: '  ', turnNo: 1, tokenCount: 0 },
    };
    expect(retrievalPlan(fold([start, blank, turn]) as RunningTurn)).toBeNull();
  });
});

describe('retrieval in a turn: what is recorded', () => {
  it('records what was found and kept as ContextRetrieved of the turn', () => {
    expect(record(withCollections())).toEqual([{ type: 'ContextRetrieved', data: { turnNo: 1, ...retrieved() } }]);
  });

  it('names the kept chunks as the sources of the answer that ends the turn, not of a reply that asks for tools', () => {
    const c = withCollections();
    const after = fold([...started({ collections: [FAQ] }), ...record(c)]) as RunningTurn;
    const reply = (toolCalls: ReturnType<typeof call>[]) =>
      conversationDecider.decide(
        {
          type: 'RecordModelReply',
          data: {
            callNo: 1,
            attempt: 1,
            reply: {
              text: toolCalls.length ? '' : 'Five days.',
              reasoning: '',
              toolCalls,
              finishReason: toolCalls.length ? 'TC' : 'ST',
              responseModel: null,
              usage: { inputTokens: 1, outputTokens: 1, estimated: false },
              latencyMs: 1,
            },
          },
          meta: at(2),
        },
        after,
      );
    const answer = reply([]).find((e) => e.type === 'MessageRecorded');
    expect(answer?.data).toMatchObject({
      role: 'AS',
      ragSources: [
        { collection: 'FAQ', documentId: 'refunds', chunkId: 'refunds#0', title: 'Refund policy', score: 0.9 },
      ],
    });
    const asking = reply([call('t1', 'lookup')]).find((e) => e.type === 'MessageRecorded');
    expect(asking?.data).not.toHaveProperty('ragSources');
    // Nothing kept: no sources.
    const empty = fold([...started({ collections: [FAQ] }), ...record(c, retrieved({ chunks: [], context: null }))]);
    expect((empty as RunningTurn).turn.context).toEqual({ text: null, sources: [] });
  });

  it('leaves the next turn without the context of the last', () => {
    const c = withCollections();
    const events = [
      ...started({ collections: [FAQ] }),
      ...record(c),
      { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'x', responseModel: null } },
      { type: 'MessageRecorded', data: { sequence: 3, role: 'US', content: 'again', turnNo: 2, tokenCount: 1 } },
      { type: 'TurnStarted', data: { turnNo: 2 } },
    ] as ConversationEvent[];
    const next = fold(events) as RunningTurn;
    expect(next.turn.context).toBeUndefined();
    expect(retrievalPlan(next)?.query).toBe('again');
  });
});

describe('the prompt budget', () => {
  const model = (contextWindow?: number) => ({
    ...snapshotFixture().model,
    ...(contextWindow === undefined ? {} : { contextWindow }),
  });
  const turn = (overrides: Parameters<typeof started>[0]) => fold(started(overrides)) as RunningTurn;

  it('is MAX_PROMPT_TOKENS when set, else the context window less the reply, else none', () => {
    expect(promptBudget(turn({ limits: limits({ maxPromptTokens: 500 }), model: model(8000) }))).toBe(500);
    const noCaps = limits({ maxPromptTokens: null, maxCompletionTokens: null });
    expect(promptBudget(turn({ limits: noCaps, model: model(8000), options: {} }))).toBe(8000 - 1024);
    // The turn's completion budget caps the reply.
    expect(
      promptBudget(
        turn({ limits: limits({ maxPromptTokens: null, maxCompletionTokens: 512 }), model: model(8000), options: {} }),
      ),
    ).toBe(7488);
    expect(promptBudget(turn({ limits: noCaps, model: model(8000), options: { maxTokens: 300 } }))).toBe(7700);
    expect(promptBudget(turn({ limits: noCaps, model: model() }))).toBeNull();
  });

  it('fails the turn whose prompt is over the context-window budget, and plans the check', () => {
    const c = turn({
      limits: limits({ maxPromptTokens: null, maxCompletionTokens: null }),
      model: model(2000),
      options: { maxTokens: 1000 },
    });
    expect(nextTurnStep(c, T0)).toMatchObject({ kind: 'call_model', plan: { checkPrompt: true } });
    const check = (promptTokens: number) =>
      conversationDecider.decide({ type: 'CheckPrompt', data: { promptTokens }, meta: at(1) }, c);
    expect(check(1000)).toEqual([]);
    expect(check(1001)).toEqual([
      expect.objectContaining({
        type: 'ConversationFailed',
        data: expect.objectContaining({ code: 'LLM_LIMIT_EXCEEDED' }),
      }),
    ]);
  });
});

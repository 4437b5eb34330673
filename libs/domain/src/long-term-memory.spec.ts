import type { LongTermMemorySettings } from '@parley/core';
import { toolFixture } from '@parley/testing';
import { decide } from './conversation.decide';
import type { ConversationEvent, RecalledMemory } from './conversation.events';
import type { ExistingConversation } from './conversation.state';
import { at, call, fold, replied, started, T0 } from './turn.fixtures';
import { nextTurnStep } from './turn.step';

const remember = toolFixture({ name: 'remember', kind: 'memory', ref: 'remember', idempotent: true });
const recall = toolFixture({ name: 'recall', kind: 'memory', ref: 'recall', idempotent: true });
const embedding = { code: 'EMB', name: 'emb', providerCode: 'SIM', inputTokenPrice: 0 };
const memory = (over: Partial<LongTermMemorySettings> = {}): LongTermMemorySettings => ({
  tools: true,
  autoRecall: false,
  embedding,
  ...over,
});

/** A conversation of user u1 whose action has the memory tools (and auto recall when asked). */
function withMemory(settings = memory(), metadata: Record<string, unknown> = { userId: 'u1' }): ConversationEvent[] {
  const [first, ...rest] = started({ tools: [remember, recall], longTermMemory: settings });
  if (first.type !== 'ConversationStarted') throw new Error('expected ConversationStarted');
  return [{ ...first, data: { ...first.data, metadata } }, ...rest];
}

const step = (events: ConversationEvent[]) => nextTurnStep(fold(events), T0 + 1_000);
const hit: RecalledMemory = {
  memoryId: 'm1',
  scope: 'user',
  text: 'likes teal',
  importance: 0.5,
  similarity: 0.9,
  score: 0.7,
};

describe('long-term memory in the turn', () => {
  it('runs a remember call for the conversation’s user, owner and defaults', () => {
    const events = [...withMemory(), ...replied(2, [call('a', 'remember', { fact: ' likes teal ' })])];
    expect(step(events)).toMatchObject({
      kind: 'memory_tool',
      call: { id: 'a' },
      request: { op: 'remember', owner: 'o', scope: 'user', scopeId: 'u1', text: 'likes teal', importance: 0.5 },
    });
  });

  it('keeps each scope under its own id: the session, the owner when no userId, the agent, the organisation', () => {
    const scoped = (scope: string, metadata = {}) => {
      const s = step([...withMemory(memory(), metadata), ...replied(2, [call('a', 'remember', { fact: 'f', scope })])]);
      return s.kind === 'memory_tool' && s.request.op === 'remember' ? s.request.scopeId : s;
    };
    expect(scoped('session')).toBe('c1');
    expect(scoped('user')).toBe('o');
    expect(scoped('user', { userId: 'u9' })).toBe('u9');
    expect(scoped('agent')).toBe('A');
    expect(scoped('organisation')).toBe('');
  });

  it('searches every scope of the conversation with a recall call', () => {
    const events = [...withMemory(), ...replied(2, [call('a', 'recall', { query: 'colour', limit: 3 })])];
    expect(step(events)).toMatchObject({
      kind: 'memory_tool',
      request: {
        op: 'recall',
        query: 'colour',
        limit: 3,
        scopes: { owner: 'o', ids: { session: 'c1', user: 'u1', agent: 'A', organisation: '' } },
      },
    });
  });

  it.each([
    ['an empty fact', { fact: '' }, 'fact: expected a non-empty string.'],
    ['a fact too long', { fact: 'x'.repeat(2001) }, 'fact: at most 2000 characters (got 2001).'],
    ['an unknown scope', { fact: 'f', scope: 'team' }, 'scope: expected one of session, user, agent, organisation.'],
    ['an importance below 0', { fact: 'f', importance: -0.1 }, 'importance: expected a number from 0 to 1.'],
    [
      'a lifetime of 0 days',
      { fact: 'f', ttlDays: 0 },
      'ttlDays: expected a number of days above 0 and at most 36500.',
    ],
    [
      'an expiry in the past',
      { fact: 'f', expiresAt: '2020-01-01T00:00:00Z' },
      'expiresAt: expected a date-time in the future.',
    ],
  ])('refuses remember with %s as a failed call the model reads', (_case, args, message) => {
    const s = step([...withMemory(), ...replied(2, [call('a', 'remember', args)])]);
    expect(s).toMatchObject({
      kind: 'record',
      events: [{ type: 'ToolCallFailed', data: { toolCallId: 'a', code: 'INVALID_ARGUMENTS', message } }],
    });
  });

  it('refuses a recall without a query or with a limit out of range', () => {
    for (const [args, message] of [
      [{}, 'query: expected a non-empty string.'],
      [{ query: 'q', limit: 21 }, 'limit: expected a whole number from 1 to 20.'],
    ] as const) {
      expect(step([...withMemory(), ...replied(2, [call('a', 'recall', args)])])).toMatchObject({
        kind: 'record',
        events: [{ type: 'ToolCallFailed', data: { message } }],
      });
    }
  });

  it('records what was stored, then the call’s outcome, and goes on to the next model call', () => {
    const events = [...withMemory(), ...replied(2, [call('a', 'remember', { fact: 'likes teal' })])];
    const outcome = {
      ok: true as const,
      output: 'Remembered',
      truncated: false,
      durationMs: 3,
      returnDirect: false,
      skipResponse: false,
    };
    const remembered = {
      memoryId: 'm1',
      scope: 'user' as const,
      scopeId: 'u1',
      text: 'likes teal',
      importance: 0.5,
      expiresAt: null,
      updated: false,
    };
    const recorded = decide(
      { type: 'RecordMemoryToolOutcome', data: { toolCallId: 'a', outcome, remembered }, meta: at(1) },
      fold(events),
    );
    expect(recorded.map((e) => e.type)).toEqual(['MemoryRemembered', 'ToolCallCompleted']);
    expect(recorded[0]).toEqual({ type: 'MemoryRemembered', data: { turnNo: 1, toolCallId: 'a', ...remembered } });
    expect(step([...events, ...recorded]).kind).toBe('call_model');
  });

  it('records only the failure when memory could not be reached', () => {
    const events = [...withMemory(), ...replied(2, [call('a', 'recall', { query: 'q' })])];
    const outcome = { ok: false as const, error: { code: 'UNAVAILABLE' as const, message: 'down' }, durationMs: 1 };
    const recorded = decide(
      { type: 'RecordMemoryToolOutcome', data: { toolCallId: 'a', outcome }, meta: at(1) },
      fold(events),
    );
    expect(recorded).toMatchObject([{ type: 'ToolCallFailed', data: { code: 'UNAVAILABLE', message: 'down' } }]);
  });

  describe('automatic recall', () => {
    const auto = () => withMemory(memory({ tools: false, autoRecall: true }));

    it('recalls with the user’s latest message before the first model call, once', () => {
      expect(step(auto())).toEqual({
        kind: 'recall',
        plan: {
          turnNo: 1,
          query: 'hi',
          limit: 5,
          scopes: { owner: 'o', ids: { session: 'c1', user: 'u1', agent: 'A', organisation: '' } },
        },
      });
      const recorded = decide(
        { type: 'RecordAutoRecall', data: { query: 'hi', hits: [hit] }, meta: at(1) },
        fold(auto()),
      );
      expect(recorded).toEqual([
        { type: 'MemoriesRecalled', data: { turnNo: 1, auto: true, query: 'hi', hits: [hit] } },
      ]);
      const after = fold([...auto(), ...recorded]) as ExistingConversation;
      expect(after.turn?.recalled).toEqual([hit]);
      expect(nextTurnStep(after, T0 + 1_000).kind).toBe('call_model');
    });

    it('does not recall when the action does not ask for it, nor again in a turn whose recall failed', () => {
      expect(step(withMemory()).kind).toBe('call_model');
      const failed = decide(
        { type: 'RecordAutoRecall', data: { query: 'hi', hits: [], error: 'down' }, meta: at(1) },
        fold(auto()),
      );
      expect(step([...auto(), ...failed]).kind).toBe('call_model');
    });

    it('recalls again in the next turn, whose facts replace the last turn’s', () => {
      const first = decide({ type: 'RecordAutoRecall', data: { query: 'hi', hits: [hit] }, meta: at(1) }, fold(auto()));
      const next: ConversationEvent[] = [
        ...auto(),
        ...first,
        ...replied(2, []),
        { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: null } },
        { type: 'MessageRecorded', data: { sequence: 3, role: 'US', content: 'again', turnNo: 2, tokenCount: 1 } },
        { type: 'TurnStarted', data: { turnNo: 2 } },
      ];
      expect((fold(next) as ExistingConversation).turn?.recalled).toBeUndefined();
      expect(step(next)).toMatchObject({ kind: 'recall', plan: { turnNo: 2, query: 'again' } });
    });
  });
});

import type { MemoryStrategy } from '@parley/core';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import { rememberedTranscript, type ExistingConversation } from './conversation.state';
import { estimateTokens, summaryPlan } from './memory';
import type { RunningTurn } from './turn.rules';
import { nextTurnStep } from './turn.step';
import { at, fold, started, T0 } from './turn.fixtures';

const SUMMARY = { kind: 'SUMMARY' as const, summaryThresholdTokens: 25, keepRecent: 2 };
const long = 'x'.repeat(40); // 10 tokens by the estimate

/** Turns 1..n of a user message and an answer each (sequences 1..2n), then turn n+1 started with a message. */
function history(turns: number, memory: MemoryStrategy = SUMMARY): ConversationEvent[] {
  const [start] = started({ memory });
  const events: ConversationEvent[] = [start];
  for (let t = 1; t <= turns; t++) {
    events.push(
      { type: 'MessageRecorded', data: { sequence: 2 * t - 1, role: 'US', content: long, turnNo: t, tokenCount: 10 } },
      { type: 'TurnStarted', data: { turnNo: t } },
      { type: 'MessageRecorded', data: { sequence: 2 * t, role: 'AS', content: long, turnNo: t, tokenCount: 10 } },
      { type: 'ConversationCompleted', data: { turnNo: t, finishReason: 'ST', reply: long, responseModel: null } },
    );
  }
  const next = turns + 1;
  events.push(
    {
      type: 'MessageRecorded',
      data: { sequence: 2 * next - 1, role: 'US', content: 'now', turnNo: next, tokenCount: 1 },
    },
    { type: 'TurnStarted', data: { turnNo: next } },
  );
  return events;
}

const summarized = (fromSequence: number, throughSequence: number, summary = 'S1'): ConversationEvent => ({
  type: 'MemorySummarized',
  data: {
    turnNo: 0,
    fromSequence,
    throughSequence,
    summary,
    model: 'sim-chat',
    responseModel: 'sim-chat-1',
    inputTokens: 30,
    outputTokens: 4,
    usageEstimated: false,
    cost: 0.5,
    latencyMs: 3,
  },
});

describe('SUMMARY memory: when the turn summarises', () => {
  it('summarises all but the recent messages once the history passes the threshold', () => {
    const c = fold(history(2)) as RunningTurn; // 40 tokens of history + 'now'
    const step = nextTurnStep(c, T0);
    expect(step).toMatchObject({
      kind: 'summarize',
      plan: { turnNo: 3, fromSequence: 1, throughSequence: 3, previousSummary: null },
    });
    if (step.kind === 'summarize') expect(step.plan.entries.map((m) => m.sequence)).toEqual([1, 2, 3]);
  });

  it('does not summarise under the threshold, nor with another strategy, nor after the first model call', () => {
    expect(nextTurnStep(fold(history(1)), T0).kind).toBe('call_model');
    expect(nextTurnStep(fold(history(3, { kind: 'FULL' })), T0).kind).toBe('call_model');
    const c = fold([
      ...history(2),
      { type: 'ModelCallStarted', data: { turnNo: 3, callNo: 1, attempt: 1, model: 'm', provider: 'SIM' } },
    ]) as RunningTurn;
    expect(summaryPlan({ ...c, turn: { ...c.turn, modelCalls: 1 } })).toBeNull();
  });

  it('always keeps the current turn verbatim and never splits a tool call from its result', () => {
    const c = fold(history(2, { ...SUMMARY, keepRecent: 0 })) as RunningTurn;
    expect(summaryPlan(c)?.throughSequence).toBe(4);
    const [start] = started({ memory: { ...SUMMARY, keepRecent: 1 } });
    const withTool = fold([
      start,
      { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: long, turnNo: 1, tokenCount: 10 } },
      { type: 'TurnStarted', data: { turnNo: 1 } },
      {
        type: 'MessageRecorded',
        data: {
          sequence: 2,
          role: 'AS',
          content: long,
          turnNo: 1,
          tokenCount: 10,
          toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }],
        },
      },
      {
        type: 'ToolCallCompleted',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'c1',
          name: 'lookup',
          output: long,
          truncated: false,
          durationMs: 1,
        },
      },
      { type: 'MessageRecorded', data: { sequence: 4, role: 'AS', content: 'ok', turnNo: 1, tokenCount: 1 } },
      { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'ok', responseModel: null } },
      { type: 'MessageRecorded', data: { sequence: 5, role: 'US', content: 'now', turnNo: 2, tokenCount: 1 } },
      { type: 'TurnStarted', data: { turnNo: 2 } },
    ]) as RunningTurn;
    // keepRecent 1 keeps only 'now'; the cut lands at sequence 4, not inside the call at 2..3.
    expect(summaryPlan(withTool)?.throughSequence).toBe(4);
    const tight = { ...withTool, snapshot: { ...withTool.snapshot, memory: { ...SUMMARY, keepRecent: 3 } } };
    // keepRecent 3 would start the verbatim part at the tool result (3): it starts at its call (2).
    expect(summaryPlan(tight)?.throughSequence).toBe(1);
  });

  it('folds the previous summary in and does not summarise again while the rest is under the threshold', () => {
    const once = fold([...history(2), summarized(1, 3)]) as RunningTurn;
    expect(nextTurnStep(once, T0).kind).toBe('call_model');
    const later = fold([...history(4), summarized(1, 3)]) as RunningTurn;
    expect(summaryPlan(later)).toMatchObject({ fromSequence: 1, throughSequence: 7, previousSummary: 'S1' });
    expect(summaryPlan(later)!.entries.map((m) => m.sequence)).toEqual([4, 5, 6, 7]);
  });

  it('takes the defaults (4000 tokens, six recent messages) where the strategy sets none', () => {
    const bare = { kind: 'SUMMARY' } as const;
    expect(summaryPlan(fold(history(2, bare)) as RunningTurn)).toBeNull();
    const c = fold(history(2, bare)) as RunningTurn;
    const plan = summaryPlan(c, (text) => (text.length > 10 ? 1000 : 1));
    // 4001 tokens, over the threshold, but five entries: all within the six kept verbatim.
    expect(plan).toBeNull();
    const longer = fold(history(4, bare)) as RunningTurn;
    expect(summaryPlan(longer, (text) => (text.length > 10 ? 1000 : 1))).toMatchObject({ throughSequence: 3 });
  });

  it('counts with the tokenizer it is given', () => {
    const c = fold(history(2)) as RunningTurn;
    expect(summaryPlan(c, () => 1)).toBeNull();
    expect(estimateTokens(long)).toBe(10);
  });
});

describe('memory events: what the prompt remembers', () => {
  it('records the summary with its usage and cost, and the conversation counts them', () => {
    const c = fold(history(2)) as RunningTurn;
    const events = conversationDecider.decide(
      {
        type: 'RecordMemorySummary',
        data: {
          fromSequence: 1,
          throughSequence: 3,
          summary: 'S1',
          responseModel: 'sim-chat-1',
          usage: { inputTokens: 30, outputTokens: 4, estimated: false },
          latencyMs: 3,
        },
        meta: at(1),
      },
      c,
    );
    expect(events).toEqual([
      {
        type: 'MemorySummarized',
        data: expect.objectContaining({
          turnNo: 3,
          fromSequence: 1,
          throughSequence: 3,
          summary: 'S1',
          model: c.snapshot.model.name,
          inputTokens: 30,
          outputTokens: 4,
        }),
      },
    ]);
    const after = fold([...history(2), ...events]) as ExistingConversation;
    expect(after.usage.inputTokens).toBe(c.usage.inputTokens + 30);
    expect(after.status).toBe('RU');
    const { summary, entries } = rememberedTranscript(after);
    expect(summary?.text).toBe('S1');
    expect(entries.map((m) => m.sequence)).toEqual([4, 5]);
  });

  it('remembers nothing up to a clear, a summary before it included, while the transcript keeps it all', () => {
    const done = history(2).slice(0, -2);
    const c = fold([
      ...done,
      summarized(1, 2),
      { type: 'MemoryCleared', data: { throughSequence: 4, reason: null, by: 'client-a' } },
      { type: 'MessageRecorded', data: { sequence: 5, role: 'US', content: 'again', turnNo: 3, tokenCount: 1 } },
    ]) as ExistingConversation;
    expect(c.transcript).toHaveLength(5);
    expect(rememberedTranscript(c)).toEqual({ summary: null, entries: [expect.objectContaining({ sequence: 5 })] });
  });

  it('clears through the last message and names the caller', () => {
    const c = fold(history(1).slice(0, -2));
    expect(
      conversationDecider.decide(
        {
          type: 'ClearMemory',
          data: { reason: 'fresh start' },
          meta: { now: new Date(T0).toISOString(), actor: 'u1' },
        },
        c,
      ),
    ).toEqual([{ type: 'MemoryCleared', data: { throughSequence: 2, reason: 'fresh start', by: 'u1' } }]);
  });
});

import { snapshotFixture } from '@parley/testing';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import type { ConversationState, ExistingConversation } from './conversation.state';

const fold = (events: ConversationEvent[]): ConversationState =>
  events.reduce(conversationDecider.evolve, conversationDecider.initialState());
const existing = (events: ConversationEvent[]) => fold(events) as ExistingConversation;

const running: ConversationEvent[] = [
  {
    type: 'ConversationStarted',
    data: {
      conversationId: 'c1',
      agentCode: 'A',
      actionCode: 'B',
      owner: 'o',
      metadata: {},
      snapshot: snapshotFixture(),
    },
  },
  { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 } },
  { type: 'TurnStarted', data: { turnNo: 1 } },
];
const call = { id: 'call_1', name: 'lookup', arguments: '{}' };

describe('conversation evolve: the worker transitions', () => {
  it('RU -> CO on ConversationCompleted, with usage and cost summed over model calls', () => {
    const s = existing([
      ...running,
      { type: 'ModelCallStarted', data: { turnNo: 1, callNo: 1, attempt: 1, model: 'm', provider: 'p' } },
      {
        type: 'ModelCallCompleted',
        data: {
          turnNo: 1,
          callNo: 1,
          attempt: 1,
          finishReason: 'TC',
          responseModel: 'm-1',
          inputTokens: 10,
          outputTokens: 5,
          usageEstimated: false,
          cost: 0.00002,
          latencyMs: 3,
        },
      },
      {
        type: 'ModelCallCompleted',
        data: {
          turnNo: 1,
          callNo: 2,
          attempt: 1,
          finishReason: 'ST',
          responseModel: 'm-1',
          inputTokens: 20,
          outputTokens: 7,
          usageEstimated: false,
          cost: 0.000034,
          latencyMs: 3,
        },
      },
      { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'ok', responseModel: 'm-1' } },
    ]);
    expect(s.status).toBe('CO');
    expect(s.usage).toEqual({ inputTokens: 30, outputTokens: 12, estimatedCost: 0.000054 });
    expect(s.turn?.modelCalls).toBe(2);
    expect(s.finishReason).toBe('ST');
    expect(s.responseModel).toBe('m-1');
  });

  it('RU -> FA on ConversationFailed, keeping the error detail; a new turn clears it', () => {
    const failed = [
      ...running,
      {
        type: 'ConversationFailed',
        data: { turnNo: 1, code: 'TOOL_ERRORS', message: 'two failures' },
      } as ConversationEvent,
    ];
    expect(existing(failed)).toMatchObject({ status: 'FA', error: { code: 'TOOL_ERRORS', message: 'two failures' } });
    const retried = existing([
      ...failed,
      { type: 'MessageRecorded', data: { sequence: 2, role: 'US', content: 'again', turnNo: 2, tokenCount: 1 } },
      { type: 'TurnStarted', data: { turnNo: 2 } },
    ]);
    expect(retried).toMatchObject({ status: 'RU', error: null, turn: { no: 2, modelCalls: 0 } });
  });

  it('keeps the details of a failure that has them (BUDGET_EXCEEDED)', () => {
    const details = { budget: 'DAY', cap: 1, spent: 0.9, reserved: 0.05 };
    const failed = existing([
      ...running,
      {
        type: 'ConversationFailed',
        data: { turnNo: 1, code: 'BUDGET_EXCEEDED', message: 'over', details },
      } as ConversationEvent,
    ]);
    expect(failed.error).toEqual({ code: 'BUDGET_EXCEEDED', message: 'over', details });
  });

  it('RU -> WA on QuestionAsked, and back to RU when the turn resumes', () => {
    const asked = existing([
      ...running,
      {
        type: 'MessageRecorded',
        data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 0, toolCalls: [call] },
      },
      {
        type: 'QuestionAsked',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'call_1',
          questions: [{ key: 'k', question: 'q?' }],
          expiresAt: 'x',
        },
      },
    ]);
    expect(asked.status).toBe('WA');
    expect(asked.pendingQuestion?.toolCallId).toBe('call_1');
    expect(asked.transcript.map((m) => m.role)).toEqual(['US', 'AS', 'QU']);
  });

  it('tracks tool calls through started, completed and failed, counting consecutive failures', () => {
    const two = { id: 'call_2', name: 'lookup', arguments: '{}' };
    const s = existing([
      ...running,
      {
        type: 'MessageRecorded',
        data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 0, toolCalls: [call, two] },
      },
      {
        type: 'ToolCallStarted',
        data: { turnNo: 1, toolCallId: 'call_1', name: 'lookup', arguments: '{}', kind: 'in_process' },
      },
      {
        type: 'ToolCallFailed',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'call_1',
          name: 'lookup',
          code: 'TOOL_ERROR',
          message: 'boom',
          durationMs: 1,
        },
      },
      {
        type: 'ToolCallStarted',
        data: { turnNo: 1, toolCallId: 'call_2', name: 'lookup', arguments: '{}', kind: 'in_process' },
      },
    ]);
    expect(s.turn?.toolCalls.map((t) => t.status)).toEqual(['failed', 'started']);
    expect(s.turn?.consecutiveToolFailures).toBe(1);
    expect(s.transcript.at(-1)).toEqual({
      sequence: 3,
      role: 'TO',
      content: 'Error (TOOL_ERROR): boom',
      turnNo: 1,
      toolCallId: 'call_1',
    });
  });

  it('RU -> ST on ConversationStuck; a paused RU resumes to RU', () => {
    expect(fold([...running, { type: 'ConversationStuck', data: { turnNo: 1, idleMs: 5 } }]).status).toBe('ST');
    const paused = existing([...running, { type: 'ConversationPaused', data: { reason: null } }]);
    expect(paused).toMatchObject({ status: 'PA', pausedFrom: 'RU' });
    expect(
      fold([
        ...running,
        { type: 'ConversationPaused', data: { reason: null } },
        { type: 'ConversationResumed', data: {} },
      ]).status,
    ).toBe('RU');
  });

  it('counts the runs of a turn: TurnStarted is the first, each TurnResumed another, a new turn starts over', () => {
    expect(existing(running).turn?.runs).toBe(1);
    const resumed = existing([
      ...running,
      { type: 'ConversationPaused', data: { reason: null } },
      { type: 'ConversationResumed', data: {} },
      { type: 'TurnResumed', data: { turnNo: 1, reason: 'resume' } },
      { type: 'ConversationStuck', data: { turnNo: 1, idleMs: 5 } },
      { type: 'TurnResumed', data: { turnNo: 1, reason: 'recover' } },
    ]);
    expect(resumed.turn).toMatchObject({ no: 1, runs: 3 });
    expect(existing([...running, { type: 'TurnStarted', data: { turnNo: 2 } }]).turn).toMatchObject({ no: 2, runs: 1 });
  });

  it('ignores events for a stream that was never started', () => {
    expect(fold([{ type: 'TurnStarted', data: { turnNo: 1 } }])).toEqual({ status: 'none' });
  });
});

import { deciderSpec, toolFixture } from '@parley/testing';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import { at, call, fold, replied, started, T0 } from './turn.fixtures';
import { nextTurnStep } from './turn.step';

const spec = deciderSpec(conversationDecider);
const weather = toolFixture({ name: 'weather', kind: 'remote', ref: 'WEATHER', returnDirect: true });
const begun = (): ConversationEvent[] => [...started({ tools: [weather] }), ...replied(2, [call('w1', 'weather')])];
const deadline = new Date(T0 + 30_000).toISOString();
const invoked: ConversationEvent = {
  type: 'RemoteToolInvoked',
  data: {
    turnNo: 1,
    toolCallId: 'w1',
    name: 'weather',
    correlationId: 'corr-1',
    subject: 'weather.forecast',
    deadline,
  },
};
const waiting = (): ConversationEvent[] => [...begun(), invoked];

describe('remote tools in the decider', () => {
  it('asks the worker to publish a remote call, not to run it', () => {
    expect(nextTurnStep(fold(begun()), T0 + 1_000)).toMatchObject({
      kind: 'remote_tool',
      call: { id: 'w1' },
      tool: { kind: 'remote' },
    });
  });

  it('records the invocation, which makes the conversation wait with no step for a worker', () => {
    spec
      .given(begun())
      .when({
        type: 'RecordRemoteToolInvoked',
        data: { toolCallId: 'w1', correlationId: 'corr-1', subject: 'weather.forecast', deadline },
        meta: at(1_000),
      })
      .then([invoked]);
    const state = fold(waiting());
    expect(state.status).toBe('WA');
    expect(nextTurnStep(state, T0 + 2_000)).toEqual({ kind: 'idle' });
  });

  it('records a completion as the call’s outcome, with the tool’s flags, and resumes the turn', () => {
    spec
      .given(waiting())
      .when({
        type: 'CompleteRemoteTool',
        data: { correlationId: 'corr-1', result: { ok: true, output: 'sunny', truncated: false } },
        meta: at(5_000),
      })
      .then([
        {
          type: 'ToolCallCompleted',
          data: {
            turnNo: 1,
            sequence: 3,
            toolCallId: 'w1',
            name: 'weather',
            output: 'sunny',
            truncated: false,
            durationMs: 5_000,
            returnDirect: true,
          },
        },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'remote_tool' } },
      ]);
  });

  it('records a service’s error as a failed call', () => {
    spec
      .given(waiting())
      .when({
        type: 'CompleteRemoteTool',
        data: { correlationId: 'corr-1', result: { ok: false, error: { code: 'TOOL_ERROR', message: 'no city' } } },
        meta: at(2_000),
      })
      .then([
        {
          type: 'ToolCallFailed',
          data: {
            turnNo: 1,
            sequence: 3,
            toolCallId: 'w1',
            name: 'weather',
            code: 'TOOL_ERROR',
            message: 'no city',
            durationMs: 2_000,
          },
        },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'remote_tool' } },
      ]);
  });

  it('drops a duplicate, an unknown correlation id, and a completion for a killed conversation', () => {
    const answered = [
      ...waiting(),
      {
        type: 'ToolCallCompleted',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'w1',
          name: 'weather',
          output: 'x',
          truncated: false,
          durationMs: 1,
        },
      },
      { type: 'TurnResumed', data: { turnNo: 1, reason: 'remote_tool' } },
    ] as ConversationEvent[];
    const completion = (correlationId: string) => ({
      type: 'CompleteRemoteTool' as const,
      data: { correlationId, result: { ok: true as const, output: 'again', truncated: false } },
      meta: at(3_000),
    });
    spec.given(answered).when(completion('corr-1')).then([]);
    spec.given(waiting()).when(completion('corr-2')).then([]);
    spec
      .given([...waiting(), { type: 'ConversationKilled', data: { reason: null } }])
      .when(completion('corr-1'))
      .then([]);
  });

  it('fails the call as TIMEOUT at its deadline and resumes the turn; nothing before it, or once answered', () => {
    spec
      .given(waiting())
      .when({ type: 'ExpireRemoteTool', data: { toolCallId: 'w1' }, meta: at(30_000) })
      .then([
        {
          type: 'ToolCallFailed',
          data: {
            turnNo: 1,
            sequence: 3,
            toolCallId: 'w1',
            name: 'weather',
            code: 'TIMEOUT',
            message: `Remote tool 'weather' did not answer by its deadline (${deadline}).`,
            durationMs: 30_000,
          },
        },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'remote_tool' } },
      ]);
    spec
      .given(waiting())
      .when({ type: 'ExpireRemoteTool', data: { toolCallId: 'w1' }, meta: at(29_999) })
      .then([]);
    spec
      .given([...begun()])
      .when({ type: 'ExpireRemoteTool', data: { toolCallId: 'w1' }, meta: at(40_000) })
      .then([]);
  });
});

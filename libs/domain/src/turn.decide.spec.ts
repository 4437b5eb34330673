import { DomainError, type ToolOutcome } from '@parley/core';
import { deciderSpec, toolFixture } from '@parley/testing';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import type { ModelReply } from './turn.commands';
import { at, call, fold, limits, replied, started, toolDone } from './turn.fixtures';
import { nextTurnStep } from './turn.step';

const spec = deciderSpec(conversationDecider);

const reply = (overrides: Partial<ModelReply> = {}): ModelReply => ({
  text: 'Your order ships today.',
  reasoning: '',
  toolCalls: [],
  finishReason: 'ST',
  responseModel: 'sim-chat-1',
  usage: { inputTokens: 1_000, outputTokens: 500, estimated: false },
  latencyMs: 42,
  ...overrides,
});

const completedOutcome = (output: string, durationMs: number): ToolOutcome => ({
  ok: true,
  output,
  truncated: false,
  durationMs,
  returnDirect: false,
  skipResponse: false,
});
const toolOutcome = (toolCallId: string, outcome: ToolOutcome) =>
  ({ type: 'RecordToolOutcome', data: { toolCallId, outcome }, meta: at(1) }) as const;

const askCall = call('q', 'AskUserQuestion', { questions: [{ key: 'k', question: 'Q?' }] });
const waiting: ConversationEvent[] = [
  ...started(),
  ...replied(2, [askCall]),
  {
    type: 'QuestionAsked',
    data: {
      turnNo: 1,
      sequence: 3,
      toolCallId: 'q',
      questions: [{ key: 'k', question: 'Q?' }],
      expiresAt: '2026-01-01T00:05:00.000Z',
    },
  },
];

describe('the decider on the turn worker’s commands', () => {
  describe('RecordModelReply', () => {
    it('records the reply with its usage and cost, and ends the turn when it asks for no tool', () => {
      spec
        .given(started())
        .when({ type: 'RecordModelReply', data: { callNo: 1, attempt: 2, reply: reply() }, meta: at(100) })
        .then([
          {
            type: 'ModelCallCompleted',
            data: {
              turnNo: 1,
              callNo: 1,
              attempt: 2,
              finishReason: 'ST',
              responseModel: 'sim-chat-1',
              inputTokens: 1_000,
              outputTokens: 500,
              usageEstimated: false,
              cost: 1_000 * 0.000001 + 500 * 0.000002,
              latencyMs: 42,
            },
          },
          {
            type: 'MessageRecorded',
            data: { sequence: 2, role: 'AS', content: 'Your order ships today.', turnNo: 1, tokenCount: 500 },
          },
          {
            type: 'ConversationCompleted',
            data: { turnNo: 1, finishReason: 'ST', reply: 'Your order ships today.', responseModel: 'sim-chat-1' },
          },
        ]);
    });

    it('leaves the turn running when the reply asks for tools, keeping the calls and the reasoning', () => {
      const calls = [call('a', 'lookup', { orderId: '7' })];
      const events = spec
        .given(started())
        .when({
          type: 'RecordModelReply',
          data: {
            callNo: 1,
            attempt: 1,
            reply: reply({ text: '', toolCalls: calls, finishReason: 'TC', reasoning: 'look it up' }),
          },
          meta: at(100),
        })
        .then([
          expect.objectContaining({ type: 'ModelCallCompleted' }),
          {
            type: 'MessageRecorded',
            data: {
              sequence: 2,
              role: 'AS',
              content: null,
              turnNo: 1,
              tokenCount: 500,
              toolCalls: calls,
              reasoning: 'look it up',
            },
          },
        ]);
      expect(events.map((e) => e.type)).not.toContain('ConversationCompleted');
    });

    it('refuses the calls of one reply past the per-reply cap as data, and goes on with the others', () => {
      const calls = ['a', 'b', 'c', 'd'].map((id) => call(id, 'lookup', { orderId: id }));
      const given = started({ limits: limits({ maxToolCallsPerReply: 2 }) });
      const events = spec
        .given(given)
        .when({
          type: 'RecordModelReply',
          data: { callNo: 1, attempt: 1, reply: reply({ text: '', toolCalls: calls, finishReason: 'TC' }) },
          meta: at(100),
        })
        .then([
          expect.objectContaining({ type: 'ModelCallCompleted' }),
          expect.objectContaining({ type: 'MessageRecorded', data: expect.objectContaining({ toolCalls: calls }) }),
          ...[
            [3, 'c'],
            [4, 'd'],
          ].map(([sequence, toolCallId]) => ({
            type: 'ToolCallFailed',
            data: {
              turnNo: 1,
              sequence,
              toolCallId,
              name: 'lookup',
              code: 'NOT_ALLOWED',
              message:
                'Not run: the reply asked for 4 tool calls and at most 2 run per reply. Ask for the rest in a later reply.',
              durationMs: 0,
              refused: true,
            },
          })),
        ]);
      const after = fold([...given, ...events]);
      // Refusals are not failures of a tool: the two-failures rule does not end the turn.
      expect(after.status === 'RU' && after.turn?.consecutiveToolFailures).toBe(0);
      expect(nextTurnStep(after, Date.parse(at(200).now))).toMatchObject({ kind: 'run_tool', call: { id: 'a' } });
    });

    it('gives a call whose id the model repeats in a later reply an id of its own, keeping the model’s', () => {
      const given = [...started(), ...replied(2, [call('call_1', 'lookup')]), toolDone(3, 'call_1', 'lookup')];
      const [, recorded] = spec
        .given(given)
        .when({
          type: 'RecordModelReply',
          data: {
            callNo: 2,
            attempt: 1,
            reply: reply({ text: '', toolCalls: [call('call_1', 'refund'), call('call_2', 'lookup')] }),
          },
          meta: at(100),
        })
        .then([expect.objectContaining({ type: 'ModelCallCompleted' }), expect.anything()]);
      expect(recorded).toMatchObject({
        type: 'MessageRecorded',
        data: {
          toolCalls: [
            { id: 'call_1~1.2.0', providerId: 'call_1', name: 'refund' },
            { id: 'call_2', name: 'lookup' },
          ],
        },
      });
      expect(nextTurnStep(fold([...given, recorded]), Date.parse(at(200).now))).toMatchObject({
        kind: 'run_tool',
        call: { id: 'call_1~1.2.0', name: 'refund' },
      });
    });

    it('is refused outside a running turn', () => {
      spec
        .given([
          ...started(),
          ...replied(2, []),
          {
            type: 'ConversationCompleted',
            data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: null },
          },
        ])
        .when({ type: 'RecordModelReply', data: { callNo: 2, attempt: 1, reply: reply() }, meta: at(100) })
        .thenThrows((err) => expect(err).toMatchObject({ code: 'CONFLICT' }));
    });
  });

  describe('advisors', () => {
    const applied = {
      callNo: 1,
      advisor: 'PII',
      bean: 'piiRedaction',
      phase: 'before' as const,
      messages: { before: 'a'.repeat(64), after: 'b'.repeat(64), changed: [1] },
      note: { redactions: { email: 1 } },
    };

    it('records what an advisor changed, with the turn number, and the fold is unchanged by it', () => {
      spec
        .given(started())
        .when({ type: 'RecordAdvisorApplied', data: applied, meta: at(1) })
        .then([{ type: 'AdvisorApplied', data: { turnNo: 1, ...applied } }]);
      const before = fold(started());
      const after = fold([...started(), { type: 'AdvisorApplied', data: { turnNo: 1, ...applied } }]);
      expect(after).toEqual(before);
    });

    it('is refused outside a running turn', () => {
      spec
        .given([
          ...started(),
          ...replied(2, []),
          {
            type: 'ConversationCompleted',
            data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: null },
          },
        ])
        .when({ type: 'RecordAdvisorApplied', data: applied, meta: at(100) })
        .thenThrows((err) => expect(err).toMatchObject({ code: 'CONFLICT' }));
    });
  });

  describe('the attempts of a model call', () => {
    it('records an attempt starting, with the model and provider of the snapshot', () => {
      spec
        .given(started())
        .when({ type: 'StartModelAttempt', data: { callNo: 1, attempt: 1 }, meta: at(1) })
        .then([
          { type: 'ModelCallStarted', data: { turnNo: 1, callNo: 1, attempt: 1, model: 'sim-chat', provider: 'SIM' } },
        ]);
    });

    it('records a batch of streamed deltas', () => {
      spec
        .given(started())
        .when({
          type: 'RecordChunks',
          data: { callNo: 1, attempt: 1, text: 'Hel', reasoning: '', count: 2 },
          meta: at(1),
        })
        .then([
          { type: 'ChunksReceived', data: { turnNo: 1, callNo: 1, attempt: 1, text: 'Hel', reasoning: '', count: 2 } },
        ]);
    });

    it('records a failed attempt, and the retry that follows it with its wait', () => {
      const error = { kind: 'rate_limited', message: '429', status: 429, retryable: true };
      spec
        .given(started())
        .when({ type: 'RecordModelAttemptFailed', data: { callNo: 1, attempt: 1, error, retryInMs: 250 }, meta: at(1) })
        .then([
          { type: 'ModelCallFailed', data: { turnNo: 1, callNo: 1, attempt: 1, ...error } },
          { type: 'ModelCallRetryScheduled', data: { turnNo: 1, callNo: 1, attempt: 2, delayMs: 250 } },
        ]);
      spec
        .given(started())
        .when({
          type: 'RecordModelAttemptFailed',
          data: { callNo: 1, attempt: 3, error: { kind: 'server', message: 'down', retryable: true }, retryInMs: null },
          meta: at(1),
        })
        .then([
          {
            type: 'ModelCallFailed',
            data: { turnNo: 1, callNo: 1, attempt: 3, kind: 'server', message: 'down', retryable: true },
          },
        ]);
    });

    it('fails the turn with LLM_RUNTIME_ERROR when every attempt failed in time', () => {
      spec
        .given(started())
        .when({ type: 'GiveUpModelCall', data: { message: 'provider down' }, meta: at(10_000) })
        .then([
          {
            type: 'ConversationFailed',
            data: { turnNo: 1, code: 'LLM_RUNTIME_ERROR', message: 'The model call failed: provider down' },
          },
        ]);
    });

    it('fails the turn with LLM_LIMIT_EXCEEDED when the attempts ran out of the time budget', () => {
      spec
        .given(started())
        .when({ type: 'GiveUpModelCall', data: { message: 'aborted' }, meta: at(60_000) })
        .then([
          {
            type: 'ConversationFailed',
            data: { turnNo: 1, code: 'LLM_LIMIT_EXCEEDED', message: 'The turn ran past its time budget of 60000 ms.' },
          },
        ]);
    });

    it('fails the turn with BUDGET_EXCEEDED and its details when a spend budget refuses the call', () => {
      const details = { budget: 'DAY', cap: 1, spent: 0.9, reserved: 0.05, amount: 0.1 };
      spec
        .given(started())
        .when({
          type: 'AbandonTurn',
          data: { code: 'BUDGET_EXCEEDED', message: "The model call would pass budget 'DAY'.", details },
          meta: at(1),
        })
        .then([
          {
            type: 'ConversationFailed',
            data: { turnNo: 1, code: 'BUDGET_EXCEEDED', message: "The model call would pass budget 'DAY'.", details },
          },
        ]);
    });

    it('lets a prompt within the budget through and fails the turn on one over it', () => {
      const promptBudget = limits({ maxPromptTokens: 100 });
      spec
        .given(started({ limits: promptBudget }))
        .when({ type: 'CheckPrompt', data: { promptTokens: 100 }, meta: at(1) })
        .then([]);
      spec
        .given(started({ limits: promptBudget }))
        .when({ type: 'CheckPrompt', data: { promptTokens: 101 }, meta: at(1) })
        .then([
          {
            type: 'ConversationFailed',
            data: {
              turnNo: 1,
              code: 'LLM_LIMIT_EXCEEDED',
              message: 'The prompt has 101 tokens, over the budget of 100.',
            },
          },
        ]);
    });
  });

  describe('tool calls', () => {
    const asked = [...started(), ...replied(2, [call('a', 'refund', { id: 1 })])];

    it('records a tool call starting, with its arguments and kind', () => {
      spec
        .given(asked)
        .when({ type: 'StartToolCall', data: { toolCallId: 'a' }, meta: at(1) })
        .then([
          {
            type: 'ToolCallStarted',
            data: { turnNo: 1, toolCallId: 'a', name: 'refund', arguments: '{"id":1}', kind: 'in_process' },
          },
        ]);
    });

    it("records a tool's output as the next message", () => {
      spec
        .given(asked)
        .when(toolOutcome('a', completedOutcome('refunded', 7)))
        .then([
          {
            type: 'ToolCallCompleted',
            data: {
              turnNo: 1,
              sequence: 3,
              toolCallId: 'a',
              name: 'refund',
              output: 'refunded',
              truncated: false,
              durationMs: 7,
            },
          },
        ]);
    });

    it("records a tool's failure as data the model reads", () => {
      spec
        .given(asked)
        .when(toolOutcome('a', { ok: false, error: { code: 'TIMEOUT', message: 'slow' }, durationMs: 30_000 }))
        .then([
          {
            type: 'ToolCallFailed',
            data: {
              turnNo: 1,
              sequence: 3,
              toolCallId: 'a',
              name: 'refund',
              code: 'TIMEOUT',
              message: 'slow',
              durationMs: 30_000,
            },
          },
        ]);
    });

    it('removes a triggerOnce repository once one of its tools completed', () => {
      const repo: ConversationEvent = {
        type: 'ToolRepositoryAdded',
        data: {
          repositoryId: 'once',
          options: { triggerOnce: true, exclusive: false },
          tools: [toolFixture({ name: 'coupon' })],
        },
      };
      const events = [...started(), repo, ...replied(2, [call('c', 'coupon')])];
      spec
        .given(events)
        .when(toolOutcome('c', completedOutcome('SAVE10', 1)))
        .then([
          expect.objectContaining({ type: 'ToolCallCompleted' }),
          { type: 'ToolRepositoryRemoved', data: { repositoryId: 'once', reason: 'triggered', triggeredBy: 'c' } },
        ]);
    });

    it('refuses the outcome of a call that is not one of the turn', () => {
      spec
        .given(asked)
        .when(toolOutcome('nope', { ok: false, error: { code: 'TOOL_ERROR', message: 'x' }, durationMs: 1 }))
        .thenThrows((err) => expect(err).toBeInstanceOf(DomainError));
    });
  });
});

describe('the decider on the timers’ commands', () => {
  describe('ExpireQuestion', () => {
    it('fails the turn with QUESTION_TIMEOUT once the question is past its expiry', () => {
      spec
        .given(waiting)
        .when({ type: 'ExpireQuestion', data: { toolCallId: 'q' }, meta: at(300_000) })
        .then([
          {
            type: 'ConversationFailed',
            data: { turnNo: 1, code: 'QUESTION_TIMEOUT', message: 'The question was not answered in time.' },
          },
        ]);
    });

    it('decides nothing before the expiry, for another question, or once the question was answered', () => {
      spec
        .given(waiting)
        .when({ type: 'ExpireQuestion', data: { toolCallId: 'q' }, meta: at(299_999) })
        .then([]);
      spec
        .given(waiting)
        .when({ type: 'ExpireQuestion', data: { toolCallId: 'other' }, meta: at(400_000) })
        .then([]);
      const answered: ConversationEvent[] = [
        ...waiting,
        { type: 'AnswersSubmitted', data: { turnNo: 1, sequence: 4, toolCallId: 'q', answers: { k: 'v' } } },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'answers' } },
      ];
      spec
        .given(answered)
        .when({ type: 'ExpireQuestion', data: { toolCallId: 'q' }, meta: at(400_000) })
        .then([]);
    });
  });

  describe('ExpireApproval', () => {
    const requested = (id: string): ConversationEvent => ({
      type: 'ToolCallApprovalRequested',
      data: { turnNo: 1, toolCallId: id, name: 'delete_order', arguments: '{}', expiresAt: '2026-01-01T00:01:00.000Z' },
    });
    const awaiting: ConversationEvent[] = [...started(), ...replied(2, [call('d', 'delete_order')]), requested('d')];
    const expire = (id: string, ms: number) =>
      ({ type: 'ExpireApproval', data: { toolCallId: id }, meta: at(ms) }) as const;

    it('rejects the call as APPROVAL_TIMEOUT past its expiry, and resumes the turn with that result', () => {
      spec
        .given(awaiting)
        .when(expire('d', 60_000))
        .then([
          {
            type: 'ToolCallRejected',
            data: {
              turnNo: 1,
              sequence: 3,
              toolCallId: 'd',
              name: 'delete_order',
              reason: 'No approval came in time.',
              code: 'APPROVAL_TIMEOUT',
            },
          },
          { type: 'TurnResumed', data: { turnNo: 1, reason: 'approval' } },
        ]);
    });

    it('keeps the turn waiting while another call still awaits approval', () => {
      const two: ConversationEvent[] = [
        ...started(),
        ...replied(2, [call('d', 'delete_order'), call('e', 'delete_order')]),
        requested('d'),
        requested('e'),
      ];
      const events = conversationDecider.decide(expire('d', 60_000), fold(two));
      expect(events.map((e) => e.type)).toEqual(['ToolCallRejected']);
    });

    it('decides nothing before the expiry, for another call, or once the call was approved', () => {
      spec.given(awaiting).when(expire('d', 59_999)).then([]);
      spec.given(awaiting).when(expire('other', 99_999)).then([]);
      spec
        .given([
          ...awaiting,
          { type: 'ToolCallApproved', data: { toolCallId: 'd' } },
          { type: 'TurnResumed', data: { turnNo: 1, reason: 'approval' } },
        ])
        .when(expire('d', 99_999))
        .then([]);
    });
  });

  describe('MarkStuck', () => {
    const stuckAfterMs = 120_000;

    it('marks a running turn with no new event for stuckAfterMs as stuck', () => {
      spec
        .given(started())
        .when({ type: 'MarkStuck', data: { turnNo: 1, stuckAfterMs }, meta: at(120_000) })
        .then([{ type: 'ConversationStuck', data: { turnNo: 1, idleMs: 120_000 } }]);
    });

    it('decides nothing for a turn that moved recently, another turn, or a conversation not running', () => {
      spec
        .given(started())
        .when({ type: 'MarkStuck', data: { turnNo: 1, stuckAfterMs }, meta: at(119_999) })
        .then([]);
      spec
        .given(started())
        .when({ type: 'MarkStuck', data: { turnNo: 2, stuckAfterMs }, meta: at(999_999) })
        .then([]);
      spec
        .given(waiting)
        .when({ type: 'MarkStuck', data: { turnNo: 1, stuckAfterMs }, meta: at(999_999) })
        .then([]);
    });
  });
});

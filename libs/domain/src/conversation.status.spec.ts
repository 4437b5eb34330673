import { snapshotFixture } from '@parley/testing';
import type { ConversationEvent, ConversationEventType } from './conversation.events';
import { endsTurn, type Lifecycle, type Status, statusAfter, TURN_ENDING_EVENTS } from './conversation.status';

/** One event of every type: the record type makes the compiler name a type that is missing. */
const SAMPLES: { [T in ConversationEventType]: Extract<ConversationEvent, { type: T }> } = {
  ConversationStarted: {
    type: 'ConversationStarted',
    data: {
      conversationId: 'c',
      agentCode: 'A',
      actionCode: 'B',
      owner: 'o',
      metadata: {},
      snapshot: snapshotFixture(),
    },
  },
  MessageRecorded: {
    type: 'MessageRecorded',
    data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 },
  },
  AttachmentRecorded: {
    type: 'AttachmentRecorded',
    data: { messageSequence: 1, attachmentSequence: 1, mediaType: 'image/png', url: 'https://x/y.png' },
  },
  TurnStarted: { type: 'TurnStarted', data: { turnNo: 1 } },
  ConversationErased: { type: 'ConversationErased', data: { at: '2026-01-01T00:00:00.000Z', by: 'o' } },
  TurnResumed: { type: 'TurnResumed', data: { turnNo: 1, reason: 'answers' } },
  ModelCallStarted: { type: 'ModelCallStarted', data: { turnNo: 1, callNo: 1, attempt: 1, model: 'm', provider: 'p' } },
  ChunksReceived: {
    type: 'ChunksReceived',
    data: { turnNo: 1, callNo: 1, attempt: 1, text: 'x', reasoning: '', count: 1 },
  },
  ModelCallCompleted: {
    type: 'ModelCallCompleted',
    data: {
      turnNo: 1,
      callNo: 1,
      attempt: 1,
      finishReason: 'ST',
      responseModel: null,
      inputTokens: 1,
      outputTokens: 1,
      usageEstimated: false,
      cost: 0,
      latencyMs: 1,
    },
  },
  ModelCallFailed: {
    type: 'ModelCallFailed',
    data: { turnNo: 1, callNo: 1, attempt: 1, kind: 'server', message: 'x', retryable: true },
  },
  ModelCallRetryScheduled: { type: 'ModelCallRetryScheduled', data: { turnNo: 1, callNo: 1, attempt: 2, delayMs: 1 } },
  ToolCallStarted: {
    type: 'ToolCallStarted',
    data: { turnNo: 1, toolCallId: 't', name: 'n', arguments: '{}', kind: 'in_process' },
  },
  ToolCallCompleted: {
    type: 'ToolCallCompleted',
    data: { turnNo: 1, sequence: 2, toolCallId: 't', name: 'n', output: 'o', truncated: false, durationMs: 1 },
  },
  ToolCallFailed: {
    type: 'ToolCallFailed',
    data: { turnNo: 1, sequence: 2, toolCallId: 't', name: 'n', code: 'TOOL_ERROR', message: 'x', durationMs: 1 },
  },
  ToolCallApprovalRequested: {
    type: 'ToolCallApprovalRequested',
    data: { turnNo: 1, toolCallId: 't', name: 'n', arguments: '{}' },
  },
  ToolCallApproved: { type: 'ToolCallApproved', data: { toolCallId: 't' } },
  ToolCallRejected: {
    type: 'ToolCallRejected',
    data: { turnNo: 1, sequence: 2, toolCallId: 't', name: 'n', reason: null },
  },
  QuestionAsked: {
    type: 'QuestionAsked',
    data: { turnNo: 1, sequence: 2, toolCallId: 'q', questions: [], expiresAt: '2026-01-01T00:00:00.000Z' },
  },
  RemoteToolInvoked: {
    type: 'RemoteToolInvoked',
    data: {
      turnNo: 1,
      toolCallId: 'r',
      name: 'n',
      correlationId: 'c',
      subject: 'tools.x',
      deadline: '2026-01-01T00:00:00.000Z',
    },
  },
  AnswersSubmitted: { type: 'AnswersSubmitted', data: { turnNo: 1, sequence: 3, toolCallId: 'q', answers: {} } },
  ConversationCompleted: {
    type: 'ConversationCompleted',
    data: { turnNo: 1, finishReason: 'ST', reply: 'r', responseModel: null },
  },
  ConversationFailed: { type: 'ConversationFailed', data: { turnNo: 1, code: 'TOOL_ERRORS', message: 'x' } },
  ConversationStuck: { type: 'ConversationStuck', data: { turnNo: 1, idleMs: 1 } },
  ConversationTerminated: { type: 'ConversationTerminated', data: { reason: null } },
  ConversationKilled: { type: 'ConversationKilled', data: { reason: null } },
  ConversationPaused: { type: 'ConversationPaused', data: { reason: null } },
  ConversationResumed: { type: 'ConversationResumed', data: {} },
  SkillDisclosed: { type: 'SkillDisclosed', data: { turnNo: 1, skillCode: 'S', tools: [] } },
  ToolRepositoryAdded: {
    type: 'ToolRepositoryAdded',
    data: { repositoryId: 'r', options: { triggerOnce: false, exclusive: false }, tools: [] },
  },
  ToolRepositoryChanged: {
    type: 'ToolRepositoryChanged',
    data: { repositoryId: 'r', options: { triggerOnce: false, exclusive: false }, tools: [] },
  },
  ToolRepositoryRemoved: { type: 'ToolRepositoryRemoved', data: { repositoryId: 'r', reason: 'removed' } },
  AdvisorApplied: {
    type: 'AdvisorApplied',
    data: { turnNo: 1, callNo: 1, advisor: 'GUARD', bean: 'safeGuard', phase: 'before', replaced: true },
  },
  MemoryCleared: { type: 'MemoryCleared', data: { throughSequence: 2, reason: null, by: 'client-a' } },
  MemorySummarized: {
    type: 'MemorySummarized',
    data: {
      turnNo: 2,
      fromSequence: 1,
      throughSequence: 2,
      summary: 'S',
      model: 'm',
      responseModel: null,
      inputTokens: 1,
      outputTokens: 1,
      usageEstimated: false,
      cost: 0,
      latencyMs: 1,
    },
  },
  MemoryRemembered: {
    type: 'MemoryRemembered',
    data: {
      turnNo: 1,
      toolCallId: 'c1',
      memoryId: 'm1',
      scope: 'user',
      scopeId: 'u1',
      text: 'fact',
      importance: 0.5,
      expiresAt: null,
      updated: false,
    },
  },
  OutputValidated: { type: 'OutputValidated', data: { turnNo: 1, sequence: 2, valid: true, output: { a: 1 } } },
  MemoriesRecalled: { type: 'MemoriesRecalled', data: { turnNo: 1, auto: true, query: 'q', hits: [] } },
  ContextRetrieved: {
    type: 'ContextRetrieved',
    data: {
      turnNo: 2,
      query: 'q',
      searches: [],
      chunks: [],
      blocks: 0,
      dropped: [],
      context: null,
      budget: { promptTokens: null, withoutContext: 10, context: 0 },
    },
  },
};

const at = (status: Status, pausedFrom: Lifecycle['pausedFrom'] = null): Lifecycle => ({ status, pausedFrom });

describe('statusAfter: the status machine', () => {
  it.each([
    ['ConversationStarted', at('NS')],
    ['TurnStarted', at('RU')],
    ['TurnResumed', at('RU')],
    ['QuestionAsked', at('WA')],
    ['ToolCallApprovalRequested', at('WA')],
    ['RemoteToolInvoked', at('WA')],
    ['ConversationCompleted', at('CO')],
    ['ConversationFailed', at('FA')],
    ['ConversationStuck', at('ST')],
    ['ConversationTerminated', at('TE')],
    ['ConversationKilled', at('KI')],
    ['ConversationPaused', at('PA', 'RU')],
  ] as const)('takes a running conversation to where %s says', (type, expected) => {
    expect(statusAfter(at('RU'), SAMPLES[type])).toEqual(expected);
  });

  it('resumes a paused conversation to the status it was paused in', () => {
    for (const from of ['NS', 'CO', 'FA', 'WA', 'RU'] as const) {
      const paused = statusAfter(at(from), SAMPLES.ConversationPaused);
      expect(paused).toEqual(at('PA', from));
      expect(statusAfter(paused, SAMPLES.ConversationResumed)).toEqual(at(from));
    }
  });

  it('leaves the status alone on every event that records work within a status', () => {
    const moving = new Set([
      'ConversationStarted',
      'TurnStarted',
      'TurnResumed',
      'ConversationResumed',
      'ConversationPaused',
    ]);
    for (const event of Object.values(SAMPLES)) {
      if (moving.has(event.type) || TURN_ENDING_EVENTS.has(event.type)) continue;
      expect(statusAfter(at('RU'), event)).toEqual(at('RU'));
      expect(statusAfter(at('WA'), event)).toEqual(at('WA'));
    }
  });

  it('names as turn-ending exactly the events that take a running conversation out of RU', () => {
    // A stream starts once, so ConversationStarted never follows a turn.
    for (const event of Object.values(SAMPLES).filter((e) => e.type !== 'ConversationStarted')) {
      const leavesRunning = statusAfter(at('RU'), event).status !== 'RU';
      expect({ type: event.type, endsTurn: endsTurn(event.type) }).toEqual({
        type: event.type,
        endsTurn: leavesRunning,
      });
    }
  });
});

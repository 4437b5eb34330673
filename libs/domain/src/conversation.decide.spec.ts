import { DomainError } from '@parley/core';
import { deciderSpec, snapshotFixture } from '@parley/testing';
import type { ConversationCommand, CommandMeta } from './conversation.commands';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';

const spec = deciderSpec(conversationDecider);
const meta: CommandMeta = { now: '2026-01-01T00:00:00.000Z', actor: 'client-a' };
const ID = '0193f0a0-0000-7000-8000-000000000001';
const snapshot = snapshotFixture();

const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { conversationId: ID, agentCode: 'HELPDESK', actionCode: 'ANSWER', owner: 'client-a', metadata: {}, snapshot },
};
const running: ConversationEvent[] = [
  started,
  { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 } },
  { type: 'TurnStarted', data: { turnNo: 1 } },
];
const completed: ConversationEvent[] = [
  ...running,
  { type: 'MessageRecorded', data: { sequence: 2, role: 'AS', content: 'hello', turnNo: 1, tokenCount: 1 } },
  { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'hello', responseModel: 'sim-chat' } },
];
const failed: ConversationEvent[] = [
  ...running,
  { type: 'ConversationFailed', data: { turnNo: 1, code: 'LLM_RUNTIME_ERROR', message: 'provider down' } },
];
const askCall = { id: 'call_q', name: 'AskUserQuestion', arguments: '{}' };
const waitingForAnswers: ConversationEvent[] = [
  ...running,
  {
    type: 'MessageRecorded',
    data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 0, toolCalls: [askCall] },
  },
  {
    type: 'QuestionAsked',
    data: {
      turnNo: 1,
      sequence: 3,
      toolCallId: 'call_q',
      questions: [
        { key: 'priority', question: 'How urgent?', options: ['low', 'high'] },
        { key: 'note', question: 'Anything else?', required: false },
      ],
      expiresAt: '2026-01-01T00:05:00.000Z',
    },
  },
];
const deleteCall = { id: 'call_d', name: 'delete_order', arguments: '{"orderId":"7"}' };
const refundCall = { id: 'call_r', name: 'refund', arguments: '{}' };
const waitingForApproval: ConversationEvent[] = [
  ...running,
  {
    type: 'MessageRecorded',
    data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 0, toolCalls: [deleteCall, refundCall] },
  },
  {
    type: 'ToolCallApprovalRequested',
    data: { turnNo: 1, toolCallId: 'call_d', name: 'delete_order', arguments: deleteCall.arguments },
  },
  { type: 'ToolCallApprovalRequested', data: { turnNo: 1, toolCallId: 'call_r', name: 'refund', arguments: '{}' } },
];
const pausedFromCompleted: ConversationEvent[] = [...completed, { type: 'ConversationPaused', data: { reason: null } }];
const pausedFromRunning: ConversationEvent[] = [...running, { type: 'ConversationPaused', data: { reason: 'ops' } }];
const stuck: ConversationEvent[] = [...running, { type: 'ConversationStuck', data: { turnNo: 1, idleMs: 600_000 } }];
const terminated: ConversationEvent[] = [started, { type: 'ConversationTerminated', data: { reason: 'done' } }];
const killed: ConversationEvent[] = [started, { type: 'ConversationKilled', data: { reason: 'runaway' } }];

const erased: ConversationEvent[] = [
  ...completed,
  { type: 'ConversationTerminated', data: { reason: 'erased' } },
  { type: 'ConversationErased', data: { at: meta.now, by: 'client-a' } },
];

const histories = {
  none: [] as ConversationEvent[],
  ERASED: erased,
  NS: [started],
  RU: running,
  CO: completed,
  FA: failed,
  'WA(question)': waitingForAnswers,
  'WA(approval)': waitingForApproval,
  'PA(from CO)': pausedFromCompleted,
  'PA(from RU)': pausedFromRunning,
  ST: stuck,
  TE: terminated,
  KI: killed,
};
type From = keyof typeof histories;

const cmd = <T extends ConversationCommand['type']>(type: T, data: Extract<ConversationCommand, { type: T }>['data']) =>
  ({ type, data, meta }) as ConversationCommand;

const commands = {
  StartConversation: cmd('StartConversation', {
    conversationId: ID,
    agentCode: 'HELPDESK',
    actionCode: 'ANSWER',
    metadata: {},
    snapshot,
  }),
  SendMessage: cmd('SendMessage', { content: 'next', tokenCount: 1, attachments: [] }),
  SubmitAnswers: cmd('SubmitAnswers', { answers: { priority: 'high' } }),
  ApproveToolCall: cmd('ApproveToolCall', { toolCallId: 'call_d' }),
  RejectToolCall: cmd('RejectToolCall', { toolCallId: 'call_d', reason: 'not today' }),
  TerminateConversation: cmd('TerminateConversation', { reason: 'bye' }),
  KillConversation: cmd('KillConversation', { reason: 'stop' }),
  PauseConversation: cmd('PauseConversation', { reason: null }),
  ResumeConversation: cmd('ResumeConversation', {}),
  RecoverConversation: cmd('RecoverConversation', {}),
  ClearMemory: cmd('ClearMemory', { reason: 'start over' }),
  EraseConversation: cmd('EraseConversation', {}),
};
type CommandName = keyof typeof commands;

/** Each row of the transition table: from a status, a command causes these event types or this refusal. */
const table: Record<CommandName, Partial<Record<From, string[] | string>>> = {
  StartConversation: {
    none: ['ConversationStarted'],
    NS: 'CONFLICT',
    RU: 'CONFLICT',
    CO: 'CONFLICT',
    TE: 'CONFLICT',
  },
  SendMessage: {
    none: 'NOT_FOUND',
    NS: ['MessageRecorded', 'TurnStarted'],
    CO: ['MessageRecorded', 'TurnStarted'],
    FA: ['MessageRecorded', 'TurnStarted'],
    RU: 'CONVERSATION_BUSY',
    'WA(question)': 'CONVERSATION_WAITING',
    'WA(approval)': 'CONVERSATION_WAITING',
    'PA(from CO)': 'CONVERSATION_PAUSED',
    ST: 'CONVERSATION_PAUSED',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
    ERASED: 'CONVERSATION_CLOSED',
  },
  SubmitAnswers: {
    none: 'NOT_FOUND',
    'WA(question)': ['AnswersSubmitted', 'TurnResumed'],
    NS: 'CONVERSATION_NOT_WAITING',
    RU: 'CONVERSATION_NOT_WAITING',
    CO: 'CONVERSATION_NOT_WAITING',
    FA: 'CONVERSATION_NOT_WAITING',
    'WA(approval)': 'CONVERSATION_NOT_WAITING',
    'PA(from CO)': 'CONVERSATION_NOT_WAITING',
    ST: 'CONVERSATION_NOT_WAITING',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
  },
  ApproveToolCall: {
    'WA(approval)': ['ToolCallApproved'],
    'WA(question)': 'NOT_FOUND',
    NS: 'CONVERSATION_NOT_WAITING',
    RU: 'CONVERSATION_NOT_WAITING',
    CO: 'CONVERSATION_NOT_WAITING',
    'PA(from RU)': 'CONVERSATION_NOT_WAITING',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
  },
  RejectToolCall: {
    'WA(approval)': ['ToolCallRejected'],
    'WA(question)': 'NOT_FOUND',
    RU: 'CONVERSATION_NOT_WAITING',
    CO: 'CONVERSATION_NOT_WAITING',
    TE: 'CONVERSATION_CLOSED',
  },
  TerminateConversation: {
    NS: ['ConversationTerminated'],
    RU: ['ConversationTerminated'],
    CO: ['ConversationTerminated'],
    FA: ['ConversationTerminated'],
    'WA(question)': ['ConversationTerminated'],
    'PA(from CO)': ['ConversationTerminated'],
    ST: ['ConversationTerminated'],
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
    none: 'NOT_FOUND',
  },
  KillConversation: {
    NS: ['ConversationKilled'],
    RU: ['ConversationKilled'],
    CO: ['ConversationKilled'],
    FA: ['ConversationKilled'],
    'WA(approval)': ['ConversationKilled'],
    'PA(from RU)': ['ConversationKilled'],
    ST: ['ConversationKilled'],
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
    ERASED: 'CONVERSATION_CLOSED',
  },
  PauseConversation: {
    NS: ['ConversationPaused'],
    CO: ['ConversationPaused'],
    FA: ['ConversationPaused'],
    'WA(question)': ['ConversationPaused'],
    RU: ['ConversationPaused'],
    'PA(from CO)': 'CONVERSATION_PAUSED',
    ST: 'CONFLICT',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
  },
  ResumeConversation: {
    'PA(from CO)': ['ConversationResumed'],
    'PA(from RU)': ['ConversationResumed', 'TurnResumed'],
    NS: 'CONFLICT',
    RU: 'CONFLICT',
    CO: 'CONFLICT',
    'WA(question)': 'CONFLICT',
    ST: 'CONFLICT',
    TE: 'CONVERSATION_CLOSED',
  },
  RecoverConversation: {
    ST: ['TurnResumed'],
    NS: 'CONFLICT',
    RU: 'CONFLICT',
    CO: 'CONFLICT',
    'PA(from RU)': 'CONFLICT',
    KI: 'CONVERSATION_CLOSED',
  },
  ClearMemory: {
    none: 'NOT_FOUND',
    NS: ['MemoryCleared'],
    CO: ['MemoryCleared'],
    FA: ['MemoryCleared'],
    RU: 'CONVERSATION_BUSY',
    'WA(question)': 'CONVERSATION_WAITING',
    'WA(approval)': 'CONVERSATION_WAITING',
    'PA(from CO)': 'CONVERSATION_PAUSED',
    'PA(from RU)': 'CONVERSATION_PAUSED',
    ST: 'CONVERSATION_PAUSED',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
    ERASED: 'CONVERSATION_CLOSED',
  },
  // An idle conversation is terminated, one with a turn in progress killed; erasing again records nothing.
  EraseConversation: {
    none: 'NOT_FOUND',
    NS: ['ConversationTerminated', 'ConversationErased'],
    CO: ['ConversationTerminated', 'ConversationErased'],
    FA: ['ConversationTerminated', 'ConversationErased'],
    RU: ['ConversationKilled', 'ConversationErased'],
    'WA(question)': ['ConversationKilled', 'ConversationErased'],
    'PA(from RU)': ['ConversationKilled', 'ConversationErased'],
    ST: ['ConversationKilled', 'ConversationErased'],
    TE: ['ConversationErased'],
    KI: ['ConversationErased'],
    ERASED: [],
  },
};

const rows = Object.entries(table).flatMap(([command, outcomes]) =>
  Object.entries(outcomes).map(([from, outcome]) => ({
    command: command as CommandName,
    from: from as From,
    outcome: outcome!,
  })),
);

describe('conversation decider: the transition table', () => {
  it.each(rows)('$command from $from -> $outcome', ({ command, from, outcome }) => {
    const when = spec.given(histories[from]).when(commands[command]);
    if (typeof outcome === 'string') {
      when.thenThrows((err) => {
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).code).toBe(outcome);
      });
    } else {
      const produced = conversationDecider.decide(commands[command], spec.given(histories[from]).state);
      expect(produced.map((e) => e.type)).toEqual(outcome);
    }
  });
});

describe('conversation decider: what the events say', () => {
  it('records the starter as the owner, with the snapshot', () => {
    spec
      .given([])
      .when(commands.StartConversation)
      .then([
        {
          type: 'ConversationStarted',
          data: {
            conversationId: ID,
            agentCode: 'HELPDESK',
            actionCode: 'ANSWER',
            owner: 'client-a',
            metadata: {},
            snapshot,
          },
        },
      ]);
  });

  it('numbers a new message after the transcript and starts the next turn', () => {
    spec
      .given(completed)
      .when(
        cmd('SendMessage', {
          content: 'again',
          tokenCount: 2,
          attachments: [{ mediaType: 'image/png', url: 'https://x/y.png' }],
        }),
      )
      .then([
        { type: 'MessageRecorded', data: { sequence: 3, role: 'US', content: 'again', turnNo: 2, tokenCount: 2 } },
        {
          type: 'AttachmentRecorded',
          data: { messageSequence: 3, attachmentSequence: 1, mediaType: 'image/png', url: 'https://x/y.png' },
        },
        { type: 'TurnStarted', data: { turnNo: 2 } },
      ]);
  });

  it('records the history a one-shot start brings as turn 0, the next message after it', () => {
    const history = [
      { role: 'US' as const, content: 'one', tokenCount: 1 },
      { role: 'AS' as const, content: 'two', tokenCount: 1 },
    ];
    const start = {
      ...commands.StartConversation,
      data: { ...commands.StartConversation.data, history },
    } as ConversationCommand;
    const events = conversationDecider.decide(start, spec.given([]).state);
    expect(events.slice(1)).toEqual([
      { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'one', turnNo: 0, tokenCount: 1 } },
      { type: 'MessageRecorded', data: { sequence: 2, role: 'AS', content: 'two', turnNo: 0, tokenCount: 1 } },
    ]);
    spec
      .given(events)
      .when(commands.SendMessage)
      .then([
        { type: 'MessageRecorded', data: { sequence: 3, role: 'US', content: 'next', turnNo: 1, tokenCount: 1 } },
        { type: 'TurnStarted', data: { turnNo: 1 } },
      ]);
  });

  it("starts the first turn in the same append with a one-shot caller's message and context block", () => {
    const context = {
      query: 'q',
      searches: [],
      chunks: [],
      blocks: 1,
      dropped: [],
      context: 'Below are relevant sections…',
      budget: { promptTokens: 4096, withoutContext: 10, context: 5 },
    };
    const history = [{ role: 'US' as const, content: 'one', tokenCount: 1 }];
    const start = {
      ...commands.StartConversation,
      data: { ...commands.StartConversation.data, history, message: { content: 'q', tokenCount: 1, context } },
    } as ConversationCommand;
    expect(conversationDecider.decide(start, spec.given([]).state).slice(1)).toEqual([
      { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'one', turnNo: 0, tokenCount: 1 } },
      { type: 'MessageRecorded', data: { sequence: 2, role: 'US', content: 'q', turnNo: 1, tokenCount: 1 } },
      { type: 'TurnStarted', data: { turnNo: 1 } },
      { type: 'ContextRetrieved', data: { turnNo: 1, ...context } },
    ]);
  });

  it('feeds answers back as the question tool call result and resumes the turn', () => {
    spec
      .given(waitingForAnswers)
      .when(commands.SubmitAnswers)
      .then([
        {
          type: 'AnswersSubmitted',
          data: { turnNo: 1, sequence: 4, toolCallId: 'call_q', answers: { priority: 'high' } },
        },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'answers' } },
      ]);
  });

  it('refuses answers that miss a required question or name an unknown one, listing each', () => {
    spec
      .given(waitingForAnswers)
      .when(cmd('SubmitAnswers', { answers: { color: 'red' } }))
      .thenThrows((err) => {
        expect((err as DomainError).code).toBe('VALIDATION_FAILED');
        expect((err as DomainError).details?.problems).toEqual([
          { path: 'answers.priority', message: 'an answer to "How urgent?" is required' },
          { path: 'answers.color', message: "no pending question has the key 'color'" },
        ]);
      });
  });

  it('resumes only when the last pending approval is decided', () => {
    spec
      .given(waitingForApproval)
      .when(commands.ApproveToolCall)
      .then([{ type: 'ToolCallApproved', data: { toolCallId: 'call_d' } }]);
    const oneDecided = [
      ...waitingForApproval,
      { type: 'ToolCallApproved', data: { toolCallId: 'call_d' } } as ConversationEvent,
    ];
    spec
      .given(oneDecided)
      .when(cmd('RejectToolCall', { toolCallId: 'call_r', reason: null }))
      .then([
        {
          type: 'ToolCallRejected',
          data: { turnNo: 1, sequence: 3, toolCallId: 'call_r', name: 'refund', reason: null },
        },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'approval' } },
      ]);
  });

  it('refuses an approval for an unknown tool call', () => {
    spec
      .given(waitingForApproval)
      .when(cmd('ApproveToolCall', { toolCallId: 'call_zzz' }))
      .thenThrows((err) => {
        expect((err as DomainError).code).toBe('NOT_FOUND');
        expect((err as DomainError).message).toContain('call_zzz');
      });
  });

  it('names the status in a refusal', () => {
    spec
      .given(running)
      .when(commands.SendMessage)
      .thenThrows((err) => {
        expect((err as DomainError).message).toBe(
          `Conversation '${ID}' is running a turn; wait for it to finish (status RU: running).`,
        );
      });
  });
});

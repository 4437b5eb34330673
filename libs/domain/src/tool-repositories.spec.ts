import { DomainError } from '@parley/core';
import { deciderSpec, snapshotFixture, toolFixture } from '@parley/testing';
import type { CommandMeta, ConversationCommand } from './conversation.commands';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import { availableTools, type ConversationData } from './conversation.state';
import type { ToolRepository } from './tool-repositories';

const spec = deciderSpec(conversationDecider);
const meta: CommandMeta = { now: '2026-01-01T00:00:00.000Z', actor: 'client-a' };
const ID = '0193f0a0-0000-7000-8000-000000000002';
const ask = toolFixture({ name: 'AskUserQuestion', kind: 'ask_user_question' });
const orderStatus = toolFixture({ name: 'ORDER_STATUS' });
const snapshot = snapshotFixture({ tools: [orderStatus, ask] });

const slots: ToolRepository = {
  repositoryId: 'slots',
  options: { triggerOnce: true, exclusive: false },
  tools: [toolFixture({ name: 'book_monday' }), toolFixture({ name: 'book_tuesday' })],
};
const faq: ToolRepository = {
  repositoryId: 'faq',
  options: { triggerOnce: false, exclusive: true },
  tools: [toolFixture({ name: 'faq_search', kind: 'http' })],
};

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
  { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'hello', responseModel: null } },
];
const withSlots: ConversationEvent[] = [...completed, { type: 'ToolRepositoryAdded', data: slots }];

const histories = {
  none: [] as ConversationEvent[],
  NS: [started],
  RU: running,
  CO: completed,
  'CO(with slots)': withSlots,
  FA: [...running, { type: 'ConversationFailed', data: { turnNo: 1, code: 'TOOL_ERRORS', message: 'x' } }],
  'WA(with slots)': [
    ...withSlots,
    { type: 'TurnStarted', data: { turnNo: 2 } },
    {
      type: 'QuestionAsked',
      data: { turnNo: 2, sequence: 2, toolCallId: 'q', questions: [], expiresAt: '2026-01-01T00:05:00.000Z' },
    },
  ],
  'PA(with slots)': [...withSlots, { type: 'ConversationPaused', data: { reason: null } }],
  'RU(with slots)': [...withSlots, { type: 'TurnStarted', data: { turnNo: 2 } }],
  TE: [...withSlots, { type: 'ConversationTerminated', data: { reason: 'done' } }],
  KI: [started, { type: 'ConversationKilled', data: { reason: null } }],
} satisfies Record<string, ConversationEvent[]>;
type From = keyof typeof histories;

const cmd = <T extends ConversationCommand['type']>(type: T, data: Extract<ConversationCommand, { type: T }>['data']) =>
  ({ type, data, meta }) as ConversationCommand;
const commands = {
  AddToolRepository: cmd('AddToolRepository', slots),
  ChangeToolRepository: cmd('ChangeToolRepository', { ...slots, options: { triggerOnce: false, exclusive: true } }),
  RemoveToolRepository: cmd('RemoveToolRepository', { repositoryId: 'slots' }),
};

const table: Record<keyof typeof commands, Partial<Record<From, string>>> = {
  AddToolRepository: {
    none: 'NOT_FOUND',
    NS: 'ToolRepositoryAdded',
    CO: 'ToolRepositoryAdded',
    FA: 'ToolRepositoryAdded',
    'CO(with slots)': 'CONFLICT',
    RU: 'CONVERSATION_BUSY',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
  },
  ChangeToolRepository: {
    'CO(with slots)': 'ToolRepositoryChanged',
    'WA(with slots)': 'ToolRepositoryChanged',
    'PA(with slots)': 'ToolRepositoryChanged',
    CO: 'NOT_FOUND',
    'RU(with slots)': 'CONVERSATION_BUSY',
    TE: 'CONVERSATION_CLOSED',
  },
  RemoveToolRepository: {
    'CO(with slots)': 'ToolRepositoryRemoved',
    'WA(with slots)': 'ToolRepositoryRemoved',
    NS: 'NOT_FOUND',
    'RU(with slots)': 'CONVERSATION_BUSY',
    TE: 'CONVERSATION_CLOSED',
    KI: 'CONVERSATION_CLOSED',
  },
};
const rows = Object.entries(table).flatMap(([command, outcomes]) =>
  Object.entries(outcomes).map(([from, outcome]) => ({
    command: command as keyof typeof commands,
    from: from as From,
    outcome: outcome!,
  })),
);

const stateOf = (events: ConversationEvent[]) => spec.given(events).state as ConversationData;

describe('tool repositories: the transition table', () => {
  it.each(rows)('$command from $from -> $outcome', ({ command, from, outcome }) => {
    const when = spec.given(histories[from]).when(commands[command]);
    if (outcome.startsWith('ToolRepository')) {
      const produced = conversationDecider.decide(commands[command], spec.given(histories[from]).state);
      expect(produced.map((e) => e.type)).toEqual([outcome]);
    } else {
      when.thenThrows((err) => {
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).code).toBe(outcome);
      });
    }
  });
});

describe('tool repositories: what the events say and what the model is offered', () => {
  it('records the repository with its options and resolved tools', () => {
    spec
      .given(completed)
      .when(commands.AddToolRepository)
      .then([{ type: 'ToolRepositoryAdded', data: slots }]);
  });

  it('offers a repository’s tools after the action’s, and stops offering them once it is removed', () => {
    expect(availableTools(stateOf(withSlots)).map((t) => t.name)).toEqual([
      'ORDER_STATUS',
      'AskUserQuestion',
      'book_monday',
      'book_tuesday',
    ]);
    const removed = spec
      .given(withSlots)
      .when(commands.RemoveToolRepository)
      .then([{ type: 'ToolRepositoryRemoved', data: { repositoryId: 'slots', reason: 'removed' } }]);
    expect(availableTools(stateOf([...withSlots, ...removed])).map((t) => t.name)).toEqual([
      'ORDER_STATUS',
      'AskUserQuestion',
    ]);
  });

  it('replaces the options and tools of a changed repository', () => {
    const changed = { ...slots, tools: [toolFixture({ name: 'book_friday' })] };
    const events = spec
      .given(withSlots)
      .when(cmd('ChangeToolRepository', changed))
      .then([{ type: 'ToolRepositoryChanged', data: changed }]);
    expect(stateOf([...withSlots, ...events]).toolRepositories).toEqual([changed]);
  });

  it('offers only the exclusive repositories’ tools and AskUserQuestion while one is present', () => {
    const state = stateOf([...withSlots, { type: 'ToolRepositoryAdded', data: faq }]);
    expect(availableTools(state).map((t) => t.name)).toEqual(['faq_search', 'AskUserQuestion']);
  });

  it('refuses a tool name the conversation already offers, naming who offers it', () => {
    const clashing: ToolRepository = {
      repositoryId: 'more',
      options: { triggerOnce: false, exclusive: false },
      tools: [toolFixture({ name: 'ORDER_STATUS' }), toolFixture({ name: 'book_monday' })],
    };
    spec
      .given(withSlots)
      .when(cmd('AddToolRepository', clashing))
      .thenThrows((err) => {
        expect((err as DomainError).code).toBe('CONFLICT');
        expect((err as DomainError).details?.clashes).toEqual([
          { tool: 'ORDER_STATUS', offeredBy: 'the action' },
          { tool: 'book_monday', offeredBy: "tool repository 'slots'" },
        ]);
      });
  });

  it('lets a changed repository keep its own tool names', () => {
    spec
      .given(withSlots)
      .when(cmd('ChangeToolRepository', { ...slots, options: { triggerOnce: false, exclusive: false } }))
      .then([
        {
          type: 'ToolRepositoryChanged',
          data: { ...slots, options: { triggerOnce: false, exclusive: false } },
        },
      ]);
  });

  it('refuses a repository that repeats a tool name within itself', () => {
    const twice = { ...faq, tools: [faq.tools[0], faq.tools[0]] };
    spec
      .given(completed)
      .when(cmd('AddToolRepository', twice))
      .thenThrows((err) => {
        expect((err as DomainError).details?.clashes).toEqual([{ tool: 'faq_search', offeredBy: 'this repository' }]);
      });
  });
});

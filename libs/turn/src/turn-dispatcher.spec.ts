import type { RecordedEvent } from '@parley/event-store';
import { stillOpen } from './turn-dispatcher';

let revision = 0n;
const event = (conversation: string, type: string, data: object = {}): RecordedEvent => ({
  streamId: `conversation-${conversation}`,
  category: 'conversation',
  revision: revision++,
  position: `pg:1:${revision}`,
  eventId: `e-${revision}`,
  type,
  schemaVersion: 1,
  data,
  metadata: {},
  createdAt: new Date(),
  hash: '',
  prevHash: '',
});
const typesOf = (open: Map<string, RecordedEvent[]>) =>
  Object.fromEntries([...open].map(([id, events]) => [id, events.map((e) => e.type)]));

/** Which turn starts and questions of a batch the dispatcher looks at again (the rest ended within the batch). */
describe('stillOpen', () => {
  it('keeps a turn start no later event of its conversation ended, and drops one that ended', () => {
    const open = stillOpen([
      event('a', 'MessageRecorded'),
      event('a', 'TurnStarted', { turnNo: 1 }),
      event('b', 'TurnStarted', { turnNo: 1 }),
      event('b', 'ModelCallCompleted'),
      event('a', 'ConversationCompleted'),
    ]);
    expect(typesOf(open)).toEqual({ b: ['TurnStarted'] });
  });

  it('swaps a turn that asked a question for the question, and a question answered for the resumed turn', () => {
    expect(
      typesOf(stillOpen([event('a', 'TurnStarted', { turnNo: 1 }), event('a', 'QuestionAsked', { toolCallId: 'q' })])),
    ).toEqual({ a: ['QuestionAsked'] });
    expect(
      typesOf(
        stillOpen([
          event('a', 'QuestionAsked', { toolCallId: 'q' }),
          event('a', 'AnswersSubmitted'),
          event('a', 'TurnResumed', { turnNo: 1 }),
        ]),
      ),
    ).toEqual({ a: ['TurnResumed'] });
  });

  it('keeps the deadline of a remote call still waiting, and drops it once the turn resumed', () => {
    const invoked = () => event('a', 'RemoteToolInvoked', { toolCallId: 'r', deadline: '2026-01-01T00:00:30.000Z' });
    expect(typesOf(stillOpen([event('a', 'TurnStarted', { turnNo: 1 }), invoked()]))).toEqual({
      a: ['RemoteToolInvoked'],
    });
    expect(
      typesOf(stillOpen([invoked(), event('a', 'ToolCallCompleted'), event('a', 'TurnResumed', { turnNo: 1 })])),
    ).toEqual({ a: ['TurnResumed'] });
  });

  it('drops a turn paused, killed, stuck, failed, terminated or waiting for an approval', () => {
    for (const end of [
      'ConversationPaused',
      'ConversationKilled',
      'ConversationStuck',
      'ConversationFailed',
      'ConversationTerminated',
      'ToolCallApprovalRequested',
    ])
      expect(typesOf(stillOpen([event('a', 'TurnStarted', { turnNo: 1 }), event('a', end)]))).toEqual({});
  });

  it('keeps the timer of each approval still awaited, and drops it once decided or the turn resumed', () => {
    const asked = (id: string) =>
      event('a', 'ToolCallApprovalRequested', { toolCallId: id, expiresAt: '2026-01-01T00:05:00.000Z' });
    const open = stillOpen([event('a', 'TurnStarted', { turnNo: 1 }), asked('x'), asked('y')]);
    expect(open.get('a')!.map((e) => (e.data as { toolCallId: string }).toolCallId)).toEqual(['x', 'y']);
    expect(typesOf(stillOpen([asked('x'), asked('y'), event('a', 'ToolCallApproved', { toolCallId: 'x' })]))).toEqual({
      a: ['ToolCallApprovalRequested'],
    });
    expect(
      typesOf(
        stillOpen([
          asked('x'),
          event('a', 'ToolCallRejected', { toolCallId: 'x' }),
          event('a', 'TurnResumed', { turnNo: 1 }),
        ]),
      ),
    ).toEqual({ a: ['TurnResumed'] });
    expect(typesOf(stillOpen([asked('x'), event('a', 'ConversationKilled')]))).toEqual({});
  });

  it('keeps only the newest turn start of a conversation, and a question the pause left pending', () => {
    const open = stillOpen([
      event('a', 'QuestionAsked', { toolCallId: 'q' }),
      event('a', 'ConversationPaused'),
      event('b', 'TurnStarted', { turnNo: 1 }),
      event('b', 'ConversationPaused'),
      event('b', 'ConversationResumed'),
      event('b', 'TurnResumed', { turnNo: 1 }),
    ]);
    expect(typesOf(open)).toEqual({ a: ['QuestionAsked'], b: ['TurnResumed'] });
  });
});

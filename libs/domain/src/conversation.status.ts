import type { ConversationEvent, ConversationEventType } from './conversation.events';

/** The process statuses: NS not started, RU running, CO completed, FA failed, WA waiting, PA paused, ST stuck, TE terminated, KI killed. */
export type Status = 'NS' | 'RU' | 'CO' | 'FA' | 'WA' | 'PA' | 'ST' | 'TE' | 'KI';

/** What a paused conversation returns to when it is resumed. */
export type ResumableStatus = Exclude<Status, 'PA' | 'TE' | 'KI'>;

/** Where a conversation stands: its status, and the one it left when it was paused. */
export interface Lifecycle {
  status: Status;
  pausedFrom: ResumableStatus | null;
}

export const STATUS_NAMES: Record<Status, string> = {
  NS: 'not started',
  RU: 'running',
  CO: 'completed',
  FA: 'failed',
  WA: 'waiting',
  PA: 'paused',
  ST: 'stuck',
  TE: 'terminated',
  KI: 'killed',
};

/**
 * The status machine: where an event takes a conversation. The decider's `evolve` and the
 * conversations read model both move by it, so they cannot disagree.
 */
export function statusAfter(current: Lifecycle, event: ConversationEvent): Lifecycle {
  const to = (status: Status): Lifecycle => ({ status, pausedFrom: null });
  switch (event.type) {
    case 'ConversationStarted':
      return to('NS');
    case 'TurnStarted':
    case 'TurnResumed':
      return to('RU');
    case 'ToolCallApprovalRequested':
    case 'QuestionAsked':
    case 'RemoteToolInvoked':
      return to('WA');
    case 'ConversationCompleted':
      return to('CO');
    case 'ConversationFailed':
      return to('FA');
    case 'ConversationStuck':
      return to('ST');
    case 'ConversationTerminated':
      return to('TE');
    case 'ConversationKilled':
      return to('KI');
    case 'ConversationPaused':
      return { status: 'PA', pausedFrom: resumable(current.status) };
    case 'ConversationResumed':
      return current.status === 'PA' ? to(current.pausedFrom ?? 'NS') : current;
    default:
      return current;
  }
}

const resumable = (status: Status): ResumableStatus =>
  status === 'PA' || status === 'TE' || status === 'KI' ? 'NS' : status;

/**
 * The events that take a running conversation out of RU: the turn has ended or paused there.
 * Waiters wake on them; the dispatcher stops watching the turn after them.
 */
export const TURN_ENDING_EVENTS: ReadonlySet<ConversationEventType> = new Set<ConversationEventType>([
  'ToolCallApprovalRequested',
  'QuestionAsked',
  'RemoteToolInvoked',
  'ConversationCompleted',
  'ConversationFailed',
  'ConversationStuck',
  'ConversationTerminated',
  'ConversationKilled',
  'ConversationPaused',
]);

/** Whether an event of this stored type ends or pauses a running turn. */
export const endsTurn = (type: string): boolean => TURN_ENDING_EVENTS.has(type as ConversationEventType);

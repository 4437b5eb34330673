/** The durable jobs a conversation schedules (BullMQ or in-process): turns and timers. */
export const TURN_QUEUE = 'turns';
export const TIMER_QUEUE = 'timers';

/** Run (or continue) turn `turnNo`; `revision` is the TurnStarted/TurnResumed event's, so each request runs once. */
export interface TurnJob {
  conversationId: string;
  turnNo: number;
  revision: string;
  /** W3C trace context of the command that asked for the turn, so the worker's spans join its trace. */
  trace?: Record<string, string>;
  /** The trace id of the command's request (the caller's, when it sent one): the turn's log lines carry it. */
  traceId?: string;
}

export type TimerJob =
  | { kind: 'question-expiry'; conversationId: string; toolCallId: string }
  | { kind: 'approval-expiry'; conversationId: string; toolCallId: string }
  | { kind: 'remote-deadline'; conversationId: string; toolCallId: string }
  | { kind: 'watchdog'; conversationId: string; turnNo: number; revision: string };

export const turnJobId = (conversationId: string, revision: bigint | string) => `turn:${conversationId}:${revision}`;

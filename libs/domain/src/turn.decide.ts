import { assertNever, DomainError } from '@parley/core';
import type { ConversationEvent } from './conversation.events';
import { fold } from './conversation.evolve';
import { availableTools, pendingApprovals, type ConversationState, type TurnToolCall } from './conversation.state';
import { autoRecalled, memoryToolOutcome } from './long-term-memory';
import { memorySummarized } from './memory';
import { remoteCompleted, remoteExpired, remoteInvoked } from './remote-tools';
import { contextRetrieved, ragSourcesOf } from './retrieval';
import type { RecordModelAttemptFailed, RecordModelReply, SystemCommand } from './turn.commands';
import {
  completion,
  costOf,
  isOverTime,
  nextSequence,
  overTime,
  promptBreach,
  turnFailed,
  type RunningTurn,
} from './turn.rules';
import { checkedCompletion } from './structured-output';
import { isRunningTurn } from './turn.step';
import { refusedPastCap, toolOutcome, toolStarted, withConversationIds } from './turn.tools';

/**
 * The decider's half for the system commands: the events that record the outcome of the turn's
 * I/O, and the timers' verdicts. The timers' commands (and a remote tool's completion) decide
 * nothing (no events) when the conversation has moved on; the worker's are refused outside the running turn they belong to.
 */
export function decideTurn(command: SystemCommand, state: ConversationState): ConversationEvent[] {
  const now = Date.parse(command.meta.now);
  switch (command.type) {
    case 'ExpireQuestion': {
      const pending = state.status === 'WA' ? state.pendingQuestion : null;
      if (pending?.toolCallId !== command.data.toolCallId || Date.parse(pending.expiresAt) > now) return [];
      const turnNo = state.status === 'WA' ? (state.turn?.no ?? 0) : 0;
      return [
        {
          type: 'ConversationFailed',
          data: { turnNo, code: 'QUESTION_TIMEOUT', message: 'The question was not answered in time.' },
        },
      ];
    }
    case 'ExpireApproval':
      return approvalExpired(state, command.data.toolCallId, now);
    case 'CompleteRemoteTool':
      return remoteCompleted(state, command);
    case 'ExpireRemoteTool':
      return remoteExpired(state, command);
    case 'MarkStuck': {
      if (!isRunningTurn(state) || state.turn.no !== command.data.turnNo) return [];
      const idleMs = now - Date.parse(state.updatedAt);
      if (idleMs < command.data.stuckAfterMs) return [];
      return [{ type: 'ConversationStuck', data: { turnNo: state.turn.no, idleMs } }];
    }
    default:
      return decideWorker(command, running(state, command.type));
  }
}

/**
 * A call still awaiting approval past its expiry is rejected as timed out (seed 001's
 * tool_approval_timeout_ms), and the turn goes on with that result once nothing else waits.
 */
function approvalExpired(state: ConversationState, toolCallId: string, now: number): ConversationEvent[] {
  if (state.status !== 'WA' || !state.turn) return [];
  const waiting = pendingApprovals(state);
  const call = waiting.find((t) => t.id === toolCallId);
  if (!call?.approvalExpiresAt || Date.parse(call.approvalExpiresAt) > now) return [];
  const turnNo = state.turn.no;
  const clear = waiting.length === 1 && !state.pendingQuestion;
  return [
    {
      type: 'ToolCallRejected',
      data: {
        turnNo,
        sequence: nextSequence(state),
        toolCallId,
        name: call.name,
        reason: 'No approval came in time.',
        code: 'APPROVAL_TIMEOUT',
      },
    },
    ...(clear ? [{ type: 'TurnResumed' as const, data: { turnNo, reason: 'approval' as const } }] : []),
  ];
}

function decideWorker(
  command: Exclude<
    SystemCommand,
    { type: 'ExpireQuestion' | 'ExpireApproval' | 'MarkStuck' | 'CompleteRemoteTool' | 'ExpireRemoteTool' }
  >,
  c: RunningTurn,
): ConversationEvent[] {
  const turnNo = c.turn.no;
  switch (command.type) {
    case 'StartModelAttempt': {
      const { model } = c.snapshot;
      const { callNo, attempt } = command.data;
      return [
        {
          type: 'ModelCallStarted',
          data: { turnNo, callNo, attempt, model: model.name, provider: model.providerCode },
        },
      ];
    }
    case 'RecordChunks':
      return [{ type: 'ChunksReceived', data: { turnNo, ...command.data } }];
    case 'RecordModelAttemptFailed':
      return attemptFailed(command, turnNo);
    case 'RecordModelReply':
      return modelReply(command, c);
    case 'RecordAdvisorApplied':
      return [{ type: 'AdvisorApplied', data: { turnNo, ...command.data } }];
    case 'GiveUpModelCall':
      if (isOverTime(c, Date.parse(command.meta.now))) return [overTime(c)];
      return [turnFailed(c, 'LLM_RUNTIME_ERROR', `The model call failed: ${command.data.message}`)];
    case 'AbandonTurn':
      return [turnFailed(c, command.data.code, command.data.message, command.data.details)];
    case 'CheckPrompt': {
      const breach = promptBreach(c, command.data.promptTokens);
      return breach ? [breach] : [];
    }
    case 'RecordMemorySummary':
      return [memorySummarized(c, command)];
    case 'RecordContextRetrieved':
      return [contextRetrieved(c, command)];
    case 'StartToolCall': {
      const call = turnCall(c, command.data.toolCallId);
      const tool = availableTools(c).find((t) => t.name === call.name);
      if (!tool)
        throw new DomainError('CONFLICT', `Tool '${call.name}' is not available to this action.`, {
          toolCallId: call.id,
        });
      return [toolStarted(c, call, tool)];
    }
    case 'RecordToolOutcome':
      return toolOutcome(c, turnCall(c, command.data.toolCallId), command.data.outcome);
    case 'RecordMemoryToolOutcome':
      return memoryToolOutcome(c, turnCall(c, command.data.toolCallId), command);
    case 'RecordAutoRecall':
      return [autoRecalled(c, command)];
    case 'RecordRemoteToolInvoked':
      return [remoteInvoked(c, turnCall(c, command.data.toolCallId), command)];
    default:
      return assertNever(command, 'system command');
  }
}

function attemptFailed(command: RecordModelAttemptFailed, turnNo: number): ConversationEvent[] {
  const { callNo, attempt, error, retryInMs } = command.data;
  const failed: ConversationEvent = {
    type: 'ModelCallFailed',
    data: {
      turnNo,
      callNo,
      attempt,
      kind: error.kind,
      message: error.message,
      ...(error.status === undefined ? {} : { status: error.status }),
      retryable: error.retryable,
    },
  };
  if (retryInMs === null) return [failed];
  return [
    failed,
    { type: 'ModelCallRetryScheduled', data: { turnNo, callNo, attempt: attempt + 1, delayMs: retryInMs } },
  ];
}

/**
 * The reply with its usage and cost, as the next assistant message (its tool calls with ids
 * unique in the conversation, those past the per-reply cap refused); the turn's end with it
 * when the reply ends the turn.
 */
function modelReply(command: RecordModelReply, c: RunningTurn): ConversationEvent[] {
  const { callNo, attempt, reply } = command.data;
  const { model } = c.snapshot;
  const toolCalls = withConversationIds(c, callNo, reply.toolCalls);
  const { inputTokens, outputTokens, estimated } = reply.usage;
  // The answer that ends a turn with retrieval names the chunks its prompt held.
  const ragSources = toolCalls.length === 0 ? ragSourcesOf(c) : [];
  const recorded: ConversationEvent[] = [
    {
      type: 'ModelCallCompleted',
      data: {
        turnNo: c.turn.no,
        callNo,
        attempt,
        finishReason: reply.finishReason,
        responseModel: reply.responseModel,
        inputTokens,
        outputTokens,
        usageEstimated: estimated,
        cost: costOf(model, reply.usage),
        latencyMs: reply.latencyMs,
      },
    },
    {
      type: 'MessageRecorded',
      data: {
        sequence: nextSequence(c),
        role: 'AS',
        content: reply.text || (toolCalls.length ? null : ''),
        turnNo: c.turn.no,
        tokenCount: outputTokens,
        ...(toolCalls.length ? { toolCalls } : {}),
        ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
        ...(ragSources.length ? { ragSources } : {}),
      },
    },
    ...refusedPastCap(c, toolCalls, nextSequence(c) + 1),
  ];
  const after = fold(
    recorded.map((e) => ({ ...e, metadata: { occurredAt: command.meta.now } })),
    c,
  );
  const ended = isRunningTurn(after) ? completion(after) : null;
  if (!ended) return recorded;
  // The answer is the reply's message: a reply that ends the turn asked for no tool.
  return [...recorded, ...checkedCompletion(after as RunningTurn, nextSequence(c), ended, command.data.outputCheck)];
}

function running(state: ConversationState, what: string): RunningTurn {
  if (isRunningTurn(state)) return state;
  throw new DomainError('CONFLICT', `${what} belongs to a running turn; the conversation is not running one.`, {
    status: state.status,
  });
}

function turnCall(c: RunningTurn, toolCallId: string): TurnToolCall {
  const call = c.turn.toolCalls.find((t) => t.id === toolCallId);
  if (!call) throw new DomainError('NOT_FOUND', `Tool call '${toolCallId}' is not one of this turn's.`, { toolCallId });
  return call;
}

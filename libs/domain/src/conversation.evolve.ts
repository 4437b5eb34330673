import { roundCost } from '@parley/core';
import type { ConversationEnvelope } from './event-envelope';
import {
  type ConversationData,
  type ConversationState,
  type ExistingConversation,
  NO_MEMORY_CUT,
  type ToolCallStatus,
  type TurnProgress,
} from './conversation.state';
import { type Lifecycle, statusAfter } from './conversation.status';
import { sourcesOf } from './retrieval';
import { transcriptEntryOf } from './transcript';

/**
 * Folds one event into the state. Pure. Statuses move by `statusAfter` alone; an event type
 * this version does not know leaves the state as it is (a newer Parley wrote it).
 */
export function evolve(state: ConversationState, event: ConversationEnvelope): ConversationState {
  if (event.type === 'ConversationStarted') return started(event);
  if (state.status === 'none') return state;
  const data = evolveData(state, event);
  const lifecycle = statusAfter(lifecycleOf(state), event);
  return lifecycle.status === 'PA'
    ? { ...data, status: 'PA', pausedFrom: lifecycle.pausedFrom ?? 'NS' }
    : ({ ...data, status: lifecycle.status } as ExistingConversation);
}

function started(event: Extract<ConversationEnvelope, { type: 'ConversationStarted' }>): ExistingConversation {
  const d = event.data;
  return {
    status: 'NS',
    id: d.conversationId,
    owner: d.owner,
    ...(typeof d.metadata?.userId === 'string' && d.metadata.userId ? { userId: d.metadata.userId } : {}),
    agentCode: d.agentCode,
    actionCode: d.actionCode,
    snapshot: d.snapshot,
    transcript: [],
    disclosedTools: [],
    toolRepositories: [],
    turn: null,
    pendingQuestion: null,
    usage: { inputTokens: 0, outputTokens: 0, estimatedCost: 0 },
    finishReason: null,
    responseModel: null,
    error: null,
    commands: remember({}, event),
    createdAt: event.metadata.occurredAt,
    updatedAt: event.metadata.occurredAt,
  };
}

const lifecycleOf = (state: ExistingConversation): Lifecycle => ({
  status: state.status,
  pausedFrom: state.status === 'PA' ? state.pausedFrom : null,
});

/** Everything an event changes but the status. */
function evolveData(state: ExistingConversation, event: ConversationEnvelope): ConversationData {
  const {
    status: _status,
    pausedFrom: _pausedFrom,
    ...kept
  } = state as ExistingConversation & { pausedFrom?: unknown };
  const base: ConversationData = {
    ...kept,
    commands: remember(state.commands, event),
    updatedAt: event.metadata.occurredAt,
  };
  const entry = transcriptEntryOf(event);
  const c: ConversationData = entry ? { ...base, transcript: [...base.transcript, entry] } : base;

  switch (event.type) {
    case 'ConversationStarted':
      return c;
    case 'MessageRecorded':
      if (event.data.role === 'AS') {
        const calls = (event.data.toolCalls ?? []).map((t) => ({ ...t, status: 'requested' as const }));
        return onTurn(c, (t) => ({ ...t, lastReply: event.data.content, toolCalls: [...t.toolCalls, ...calls] }));
      }
      return c;
    case 'AttachmentRecorded': {
      const { messageSequence, mediaType, url } = event.data;
      const transcript = c.transcript.map((m) =>
        m.sequence === messageSequence ? { ...m, attachments: [...(m.attachments ?? []), { mediaType, url }] } : m,
      );
      return { ...c, transcript };
    }
    case 'TurnStarted':
      return { ...c, error: null, turn: newTurn(event.data.turnNo, event.metadata.occurredAt) };
    case 'TurnResumed':
      return onTurn({ ...c, pendingQuestion: null }, (t) => ({ ...t, runs: t.runs + 1 }));
    case 'ModelCallStarted':
      return onTurn(c, (t) => ({ ...t, openModelCall: { callNo: event.data.callNo, attempt: event.data.attempt } }));
    case 'ChunksReceived':
    case 'ModelCallRetryScheduled':
      return c;
    case 'ModelCallFailed':
      return onTurn(c, (t) => ({ ...t, openModelCall: null }));
    case 'ModelCallCompleted': {
      const d = event.data;
      const usage = {
        inputTokens: c.usage.inputTokens + d.inputTokens,
        outputTokens: c.usage.outputTokens + d.outputTokens,
        estimatedCost: roundCost(c.usage.estimatedCost + d.cost),
      };
      return onTurn({ ...c, usage, responseModel: d.responseModel ?? c.responseModel }, (t) => ({
        ...t,
        modelCalls: t.modelCalls + 1,
        openModelCall: null,
        lastFinishReason: d.finishReason,
        responseModel: d.responseModel,
        usage: {
          inputTokens: t.usage.inputTokens + d.inputTokens,
          outputTokens: t.usage.outputTokens + d.outputTokens,
        },
      }));
    }
    case 'ToolCallStarted':
      return setToolStatus(c, event.data.toolCallId, 'started');
    case 'ToolCallCompleted': {
      const { returnDirect, skipResponse, output } = event.data;
      const next = setToolStatus(c, event.data.toolCallId, 'completed');
      return onTurn(next, (t) => ({
        ...t,
        consecutiveToolFailures: 0,
        ...(event.data.truncated ? { overflowedTool: event.data.name } : {}),
        endedByTool: skipResponse ? { reply: null } : returnDirect ? { reply: output } : t.endedByTool,
      }));
    }
    case 'ToolCallFailed':
      return onTurn(setToolStatus(c, event.data.toolCallId, 'failed'), (t) => ({
        ...t,
        consecutiveToolFailures: t.consecutiveToolFailures + (event.data.refused ? 0 : 1),
      }));
    case 'ToolCallApprovalRequested': {
      const { toolCallId, expiresAt } = event.data;
      const waiting = setToolStatus(c, toolCallId, 'awaiting_approval');
      if (!expiresAt) return waiting;
      return onTurn(waiting, (t) => ({
        ...t,
        toolCalls: t.toolCalls.map((tc) => (tc.id === toolCallId ? { ...tc, approvalExpiresAt: expiresAt } : tc)),
      }));
    }
    case 'ToolCallApproved':
      return setToolStatus(c, event.data.toolCallId, 'approved');
    case 'ToolCallRejected':
      return setToolStatus(c, event.data.toolCallId, 'rejected');
    case 'QuestionAsked': {
      const { toolCallId, sequence, questions, expiresAt } = event.data;
      return {
        ...setToolStatus(c, toolCallId, 'asked'),
        pendingQuestion: { toolCallId, sequence, questions, expiresAt },
      };
    }
    case 'RemoteToolInvoked': {
      const { toolCallId, correlationId, subject, deadline } = event.data;
      const remote = { correlationId, subject, deadline, invokedAt: event.metadata.occurredAt };
      return onTurn(c, (t) => ({
        ...t,
        toolCalls: t.toolCalls.map((tc) => (tc.id === toolCallId ? { ...tc, status: 'invoked', remote } : tc)),
      }));
    }
    case 'AnswersSubmitted':
      return { ...setToolStatus(c, event.data.toolCallId, 'answered'), pendingQuestion: null };
    case 'ConversationCompleted':
      return {
        ...c,
        finishReason: event.data.finishReason,
        responseModel: event.data.responseModel ?? c.responseModel,
      };
    case 'OutputValidated': {
      const { valid, sequence, output } = event.data;
      // An invalid reply counts against the repairs even when it ends the turn failed.
      if (!valid) return onTurn(c, (t) => ({ ...t, outputRepairs: (t.outputRepairs ?? 0) + 1 }));
      return { ...c, transcript: c.transcript.map((m) => (m.sequence === sequence ? { ...m, output } : m)) };
    }
    case 'ConversationFailed':
      return {
        ...c,
        error: {
          code: event.data.code,
          message: event.data.message,
          ...(event.data.details ? { details: event.data.details } : {}),
        },
      };
    case 'ConversationTerminated':
    case 'ConversationKilled':
      return { ...c, pendingQuestion: null };
    case 'ConversationStuck':
    case 'ConversationPaused':
    case 'AdvisorApplied':
    case 'ConversationResumed':
      return c;
    case 'SkillDisclosed':
      return { ...c, disclosedTools: [...c.disclosedTools, ...event.data.tools] };
    case 'ToolRepositoryAdded':
      return { ...c, toolRepositories: [...c.toolRepositories, { ...event.data }] };
    case 'ToolRepositoryChanged':
      return {
        ...c,
        toolRepositories: c.toolRepositories.map((r) =>
          r.repositoryId === event.data.repositoryId ? { ...event.data } : r,
        ),
      };
    case 'ToolRepositoryRemoved':
      return {
        ...c,
        toolRepositories: c.toolRepositories.filter((r) => r.repositoryId !== event.data.repositoryId),
      };
    case 'MemoryCleared':
      return { ...c, memory: { clearedThrough: event.data.throughSequence, summary: null } };
    case 'MemorySummarized': {
      const d = event.data;
      const usage = {
        inputTokens: c.usage.inputTokens + d.inputTokens,
        outputTokens: c.usage.outputTokens + d.outputTokens,
        estimatedCost: roundCost(c.usage.estimatedCost + d.cost),
      };
      const summary = { text: d.summary, fromSequence: d.fromSequence, throughSequence: d.throughSequence };
      return { ...c, usage, memory: { ...(c.memory ?? NO_MEMORY_CUT), summary } };
    }
    case 'MemoryRemembered':
      return c;
    case 'MemoriesRecalled':
      return event.data.auto ? onTurn(c, (t) => ({ ...t, recalled: event.data.hits })) : c;
    case 'ContextRetrieved':
      return onTurn(c, (t) => ({ ...t, context: { text: event.data.context, sources: sourcesOf(event.data) } }));
    default: {
      // Compile time: every known type is handled. Run time: a newer type is left alone.
      void (event satisfies never);
      return c;
    }
  }
}

/** Folds a whole stream. */
export function fold(
  events: Iterable<ConversationEnvelope>,
  from: ConversationState = { status: 'none' },
): ConversationState {
  let state = from;
  for (const e of events) state = evolve(state, e);
  return state;
}

function newTurn(no: number, at: string): TurnProgress {
  return {
    no,
    runs: 1,
    modelCalls: 0,
    openModelCall: null,
    toolCalls: [],
    consecutiveToolFailures: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    startedAt: at,
    lastReply: null,
    lastFinishReason: null,
    responseModel: null,
    endedByTool: null,
  };
}

function onTurn<C extends ConversationData>(c: C, f: (t: TurnProgress) => TurnProgress): C {
  return c.turn ? { ...c, turn: f(c.turn) } : c;
}

function setToolStatus<C extends ConversationData>(c: C, id: string, status: ToolCallStatus): C {
  return onTurn(c, (t) => ({ ...t, toolCalls: t.toolCalls.map((tc) => (tc.id === id ? { ...tc, status } : tc)) }));
}

function remember(commands: Record<string, string>, event: ConversationEnvelope): Record<string, string> {
  const { commandId, commandHash } = event.metadata;
  return commandId && !Object.hasOwn(commands, commandId) ? { ...commands, [commandId]: commandHash ?? '' } : commands;
}

/** The body hash a command id was first seen with; own keys only, so `constructor` or `toString` are ids like any other. */
export function seenCommand(state: { commands: Record<string, string> }, commandId: string): string | undefined {
  return Object.hasOwn(state.commands, commandId) ? state.commands[commandId] : undefined;
}

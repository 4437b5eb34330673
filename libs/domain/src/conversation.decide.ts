import { assertNever, DomainError } from '@parley/core';
import type {
  ApproveToolCall,
  ClearMemory,
  ConversationCommand,
  EraseConversation,
  PauseConversation,
  RejectToolCall,
  SendMessage,
  StartConversation,
  SubmitAnswers,
} from './conversation.commands';
import type { ConversationEvent } from './conversation.events';
import { type ConversationState, type ExistingConversation, pendingApprovals } from './conversation.state';
import { STATUS_NAMES } from './conversation.status';
import { decideToolRepository } from './tool-repositories';
import type { SystemCommand } from './turn.commands';
import { decideTurn } from './turn.decide';
import { nextSequence } from './turn.rules';

/**
 * The conversation decider: which events a command causes in a given state, or a refusal with
 * a stable error code. Pure and synchronous; `decide` only dispatches, one function per command.
 */
export function decide(command: ConversationCommand | SystemCommand, state: ConversationState): ConversationEvent[] {
  if (isSystemCommand(command)) return decideTurn(command, state);
  if (command.type === 'StartConversation') return startConversation(command, state);
  if (state.status === 'none') throw new DomainError('NOT_FOUND', 'Conversation was not found.');
  if (state.erased && command.type !== 'EraseConversation') {
    throw new DomainError('CONVERSATION_CLOSED', `Conversation '${state.id}' is erased.`, {
      conversationId: state.id,
      status: state.status,
      erased: true,
    });
  }
  switch (command.type) {
    case 'SendMessage':
      return sendMessage(command, state);
    case 'SubmitAnswers':
      return submitAnswers(command, state);
    case 'ApproveToolCall':
      return approveToolCall(command, state);
    case 'RejectToolCall':
      return rejectToolCall(command, state);
    case 'TerminateConversation':
      notClosed(state);
      return [{ type: 'ConversationTerminated', data: { reason: command.data.reason } }];
    case 'KillConversation':
      notClosed(state);
      return [{ type: 'ConversationKilled', data: { reason: command.data.reason } }];
    case 'PauseConversation':
      return pause(command, state);
    case 'ResumeConversation':
      return resume(state);
    case 'RecoverConversation':
      notClosed(state);
      if (state.status !== 'ST' || !state.turn) throw refusal('CONFLICT', state, 'is not stuck');
      return [{ type: 'TurnResumed', data: { turnNo: state.turn.no, reason: 'recover' } }];
    case 'ClearMemory':
      return clearMemory(command, state);
    case 'EraseConversation':
      return erase(command, state);
    case 'AddToolRepository':
    case 'ChangeToolRepository':
    case 'RemoveToolRepository':
      return decideToolRepository(command, state, (code, why) => refusal(code, state, why));
    default:
      return assertNever(command, 'command');
  }
}

function startConversation(command: StartConversation, state: ConversationState): ConversationEvent[] {
  const { conversationId, agentCode, actionCode, metadata, snapshot } = command.data;
  if (state.status !== 'none')
    throw new DomainError('CONFLICT', `Conversation '${conversationId}' already exists.`, { conversationId });
  const history = (command.data.history ?? []).map(({ role, content, tokenCount }, i): ConversationEvent => ({
    type: 'MessageRecorded',
    data: { sequence: i + 1, role, content, turnNo: 0, tokenCount },
  }));
  const message = command.data.message;
  const turn: ConversationEvent[] = message
    ? [
        {
          type: 'MessageRecorded',
          data: {
            sequence: history.length + 1,
            role: 'US',
            content: message.content,
            turnNo: 1,
            tokenCount: message.tokenCount,
          },
        },
        { type: 'TurnStarted', data: { turnNo: 1 } },
        ...(message.context ? [{ type: 'ContextRetrieved' as const, data: { turnNo: 1, ...message.context } }] : []),
      ]
    : [];
  return [
    {
      type: 'ConversationStarted',
      data: { conversationId, agentCode, actionCode, metadata, snapshot, owner: command.meta.actor },
    },
    ...history,
    ...turn,
  ];
}

function approveToolCall(command: ApproveToolCall, state: ExistingConversation): ConversationEvent[] {
  awaitingApproval(state, command.data.toolCallId);
  return [
    { type: 'ToolCallApproved', data: { toolCallId: command.data.toolCallId } },
    ...resumeIfClear(state, command.data.toolCallId),
  ];
}

function rejectToolCall(command: RejectToolCall, state: ExistingConversation): ConversationEvent[] {
  const call = awaitingApproval(state, command.data.toolCallId);
  return [
    {
      type: 'ToolCallRejected',
      data: {
        turnNo: state.turn?.no ?? 0,
        sequence: nextSequence(state),
        toolCallId: call.id,
        name: call.name,
        reason: command.data.reason,
      },
    },
    ...resumeIfClear(state, call.id),
  ];
}

function pause(command: PauseConversation, state: ExistingConversation): ConversationEvent[] {
  notClosed(state);
  if (state.status === 'PA') throw refusal('CONVERSATION_PAUSED', state, 'is already paused');
  if (state.status === 'ST') throw refusal('CONFLICT', state, 'is stuck: recover, terminate or kill it');
  return [{ type: 'ConversationPaused', data: { reason: command.data.reason } }];
}

/** A conversation paused mid-turn resumes its turn too. */
function resume(state: ExistingConversation): ConversationEvent[] {
  notClosed(state);
  if (state.status !== 'PA') throw refusal('CONFLICT', state, 'is not paused');
  return [
    { type: 'ConversationResumed', data: {} },
    ...(state.pausedFrom === 'RU' && state.turn
      ? [{ type: 'TurnResumed' as const, data: { turnNo: state.turn.no, reason: 'resume' as const } }]
      : []),
  ];
}

/**
 * Clears the model's memory between turns (NS, CO, FA): the next prompt starts after the last
 * message. Refused like a new message in every other status, so a running or waiting turn never
 * loses the messages it is working on.
 */
function clearMemory(command: ClearMemory, state: ExistingConversation): ConversationEvent[] {
  if (state.status !== 'NS' && state.status !== 'CO' && state.status !== 'FA') return refuseBetweenTurns(state);
  return [
    {
      type: 'MemoryCleared',
      data: { throughSequence: nextSequence(state) - 1, reason: command.data.reason, by: command.meta.actor },
    },
  ];
}

/**
 * Erasure closes the conversation (a turn in progress is killed, an idle conversation
 * terminated) and records who erased it. Erasing again records nothing: the first erasure stands.
 */
function erase(command: EraseConversation, state: ExistingConversation): ConversationEvent[] {
  if (state.erased) return [];
  const reason = 'erased';
  const closing: ConversationEvent[] =
    state.status === 'TE' || state.status === 'KI'
      ? []
      : ['RU', 'WA', 'PA', 'ST'].includes(state.status)
        ? [{ type: 'ConversationKilled', data: { reason } }]
        : [{ type: 'ConversationTerminated', data: { reason } }];
  return [...closing, { type: 'ConversationErased', data: { at: command.meta.now, by: command.meta.actor } }];
}

/** Why a command that needs the conversation between turns is refused in this status. */
function refuseBetweenTurns(state: ExistingConversation): never {
  switch (state.status) {
    case 'RU':
      throw refusal('CONVERSATION_BUSY', state, 'is running a turn; wait for it to finish');
    case 'WA':
      throw refusal('CONVERSATION_WAITING', state, 'is waiting for answers or approvals');
    case 'PA':
    case 'ST':
      throw refusal('CONVERSATION_PAUSED', state, state.status === 'PA' ? 'is paused' : 'is stuck');
    case 'TE':
    case 'KI':
      throw refusal('CONVERSATION_CLOSED', state, 'is closed');
    default:
      throw refusal('CONFLICT', state, 'cannot take this command now');
  }
}

function sendMessage(command: SendMessage, state: ExistingConversation): ConversationEvent[] {
  switch (state.status) {
    case 'NS':
    case 'CO':
    case 'FA': {
      const sequence = nextSequence(state);
      const turnNo = (state.turn?.no ?? 0) + 1;
      const { content, tokenCount, attachments } = command.data;
      return [
        { type: 'MessageRecorded', data: { sequence, role: 'US', content, turnNo, tokenCount } },
        ...attachments.map((a, i) => ({
          type: 'AttachmentRecorded' as const,
          data: { messageSequence: sequence, attachmentSequence: i + 1, mediaType: a.mediaType, url: a.url },
        })),
        { type: 'TurnStarted', data: { turnNo } },
      ];
    }
    default:
      return refuseBetweenTurns(state);
  }
}

function submitAnswers(command: SubmitAnswers, state: ExistingConversation): ConversationEvent[] {
  notClosed(state);
  const pending = state.pendingQuestion;
  if (state.status !== 'WA' || !pending) throw refusal('CONVERSATION_NOT_WAITING', state, 'is not waiting for answers');
  const { answers } = command.data;
  const known = new Set(pending.questions.map((q) => q.key));
  const problems = [
    ...pending.questions
      .filter((q) => q.required !== false && !(answers[q.key] ?? '').trim())
      .map((q) => ({ path: `answers.${q.key}`, message: `an answer to "${q.question}" is required` })),
    ...Object.keys(answers)
      .filter((k) => !known.has(k))
      .map((k) => ({ path: `answers.${k}`, message: `no pending question has the key '${k}'` })),
  ];
  if (problems.length) throw DomainError.validation(problems, 'The answers do not match the pending question.');
  const turnNo = state.turn?.no ?? 0;
  return [
    {
      type: 'AnswersSubmitted',
      data: { turnNo, sequence: nextSequence(state), toolCallId: pending.toolCallId, answers },
    },
    ...(pendingApprovals(state).length === 0
      ? [{ type: 'TurnResumed' as const, data: { turnNo, reason: 'answers' as const } }]
      : []),
  ];
}

function awaitingApproval(state: ExistingConversation, toolCallId: string) {
  notClosed(state);
  if (state.status !== 'WA') throw refusal('CONVERSATION_NOT_WAITING', state, 'is not waiting for an approval');
  const call = pendingApprovals(state).find((t) => t.id === toolCallId);
  if (!call)
    throw new DomainError('NOT_FOUND', `No tool call '${toolCallId}' is waiting for approval.`, { toolCallId });
  return call;
}

/** The turn continues once nothing is left to approve or answer. */
function resumeIfClear(state: ExistingConversation, decidedId: string): ConversationEvent[] {
  const left = pendingApprovals(state).filter((t) => t.id !== decidedId);
  if (left.length > 0 || state.pendingQuestion || !state.turn) return [];
  return [{ type: 'TurnResumed', data: { turnNo: state.turn.no, reason: 'approval' } }];
}

function notClosed(state: ExistingConversation): void {
  if (state.status === 'TE' || state.status === 'KI') throw refusal('CONVERSATION_CLOSED', state, 'is closed');
}

function refusal(
  code: ConstructorParameters<typeof DomainError>[0],
  state: ExistingConversation,
  why: string,
): DomainError {
  return new DomainError(
    code,
    `Conversation '${state.id}' ${why} (status ${state.status}: ${STATUS_NAMES[state.status]}).`,
    {
      conversationId: state.id,
      status: state.status,
    },
  );
}

/** Every system command type, as a record so that a new one cannot be left out. */
const SYSTEM_COMMAND_TYPES: Record<SystemCommand['type'], true> = {
  StartModelAttempt: true,
  RecordChunks: true,
  RecordModelAttemptFailed: true,
  RecordModelReply: true,
  RecordAdvisorApplied: true,
  GiveUpModelCall: true,
  AbandonTurn: true,
  CheckPrompt: true,
  RecordMemorySummary: true,
  RecordContextRetrieved: true,
  StartToolCall: true,
  RecordToolOutcome: true,
  RecordMemoryToolOutcome: true,
  RecordAutoRecall: true,
  RecordRemoteToolInvoked: true,
  CompleteRemoteTool: true,
  ExpireRemoteTool: true,
  ExpireQuestion: true,
  ExpireApproval: true,
  MarkStuck: true,
};

const SYSTEM_COMMANDS: ReadonlySet<string> = new Set(Object.keys(SYSTEM_COMMAND_TYPES));

const isSystemCommand = (command: ConversationCommand | SystemCommand): command is SystemCommand =>
  SYSTEM_COMMANDS.has(command.type);

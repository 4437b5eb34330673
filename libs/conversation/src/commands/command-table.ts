import type { Type } from '@nestjs/common';
import type { Role } from '@parley/auth';
import { z } from 'zod';
import { defineOperation, handlersOf, type HttpRoute, type Operation, type OperationContext } from '../api/operation';
import { commandReply, turnReply } from '../api/reply-schemas';
import { GenerateHandler, generateInput, generateReply } from './generate/generate.handler';
import {
  KillConversationHandler,
  lifecycleInput,
  PauseConversationHandler,
  RecoverConversationHandler,
  ResumeConversationHandler,
  TerminateConversationHandler,
} from './change-lifecycle/change-lifecycle.handler';
import { ClearMemoryHandler, clearMemoryInput } from './clear-memory/clear-memory.handler';
import {
  DeleteMemoriesHandler,
  deleteMemoriesQuery,
  deleteMemoriesReply,
  DeleteMemoryHandler,
  memoryRef,
} from './memories/memories.handler';
import {
  EraseConversationHandler,
  eraseConversationInput,
  eraseConversationReply,
  EraseSubjectHandler,
  eraseSubjectInput,
  eraseSubjectReply,
} from './erase/erase.handler';
import {
  ApproveToolCallHandler,
  RejectToolCallHandler,
  toolCallDecisionInput,
} from './decide-tool-call/decide-tool-call.handler';
import {
  SendMessageHandler,
  sendMessageInput,
  sendMessageWithAttachmentsInput,
} from './send-message/send-message.handler';
import { StartConversationHandler, startConversationInput } from './start-conversation/start-conversation.handler';
import { SubmitAnswersHandler, submitAnswersInput } from './submit-answers/submit-answers.handler';
import {
  AddToolRepositoryHandler,
  ChangeToolRepositoryHandler,
  RemoveToolRepositoryHandler,
  repositoryRef,
  toolRepositoryInput,
} from './tool-repositories/tool-repositories.handler';

const CLIENTS: readonly Role[] = ['client', 'admin'];
/** Kill, pause, resume and recover are an operator's tools. */
const OPERATORS: readonly Role[] = ['admin'];

interface CommandSpec<I extends z.ZodObject> {
  name: string;
  summary: string;
  input: I;
  roles: readonly Role[];
  handler: Type<{ execute(input: z.output<I>, ctx: OperationContext): Promise<unknown> }>;
  /** The reply is a TurnReply, 202 over HTTP while the turn goes on (wait=false, or timeoutMs). */
  startsTurn?: boolean;
  http?: HttpRoute;
  /** The reply's schema, when it is neither a command's nor a turn's. */
  reply?: z.ZodType;
  /** The OpenAPI tag, when not `commands`. */
  tag?: string;
}

/** A conversation command: its handler's `execute` does the work. */
const command = <I extends z.ZodObject>(spec: CommandSpec<I>): Operation =>
  defineOperation({
    ...spec,
    kind: 'command',
    tag: spec.tag ?? 'commands',
    reply: spec.reply ?? (spec.startsTurn ? turnReply : commandReply),
    run: (handler, input, ctx) => handler.execute(input, ctx),
  });

const C = '/api/v1/conversations';
/** The command routes have always been `/api/v1/conversations/:id/…` to metrics and traces. */
const segmentNames = { conversationId: 'id' };
const route = (method: HttpRoute['method'], path: string, status = 200): HttpRoute => ({
  method,
  path: `${C}${path}`,
  status,
  segmentNames,
});
const post = (path: string, status = 200) => route('post', path, status);

const sendMessage = {
  summary: 'Send a message (with attachments) and run a turn',
  roles: CLIENTS,
  handler: SendMessageHandler,
  startsTurn: true,
};

/**
 * Every conversation command, once: HTTP routes, NATS methods (`<prefix>.cmd.<name>`) and the
 * OpenAPI document are derived from it (libs/transport). A new command is an entry here, its
 * handler, and its case in the decider.
 */
export const COMMANDS: readonly Operation[] = [
  command({
    name: 'startConversation',
    summary: 'Start a conversation in which an agent runs an action',
    input: startConversationInput,
    roles: CLIENTS,
    handler: StartConversationHandler,
    http: post('', 201),
  }),
  command({ ...sendMessage, name: 'sendMessage', input: sendMessageInput, http: post('/{conversationId}/messages') }),
  command({ ...sendMessage, name: 'sendMessageWithAttachments', input: sendMessageWithAttachmentsInput }),
  command({
    name: 'submitAnswers',
    summary: 'Answer the pending question and continue the turn',
    input: submitAnswersInput,
    roles: CLIENTS,
    handler: SubmitAnswersHandler,
    startsTurn: true,
    http: post('/{conversationId}/answers'),
  }),
  command({
    name: 'approveToolCall',
    summary: 'Approve a tool call waiting for approval',
    input: toolCallDecisionInput,
    roles: CLIENTS,
    handler: ApproveToolCallHandler,
    startsTurn: true,
    http: post('/{conversationId}/tool-calls/{toolCallId}/approve'),
  }),
  command({
    name: 'rejectToolCall',
    summary: 'Reject a tool call waiting for approval',
    input: toolCallDecisionInput,
    roles: CLIENTS,
    handler: RejectToolCallHandler,
    startsTurn: true,
    http: post('/{conversationId}/tool-calls/{toolCallId}/reject'),
  }),
  command({
    name: 'terminateConversation',
    summary: 'Terminate the conversation',
    input: lifecycleInput,
    roles: CLIENTS,
    handler: TerminateConversationHandler,
    http: post('/{conversationId}/terminate'),
  }),
  command({
    name: 'killConversation',
    summary: 'Kill the conversation, a running turn included (admin)',
    input: lifecycleInput,
    roles: OPERATORS,
    handler: KillConversationHandler,
    http: post('/{conversationId}/kill'),
  }),
  command({
    name: 'pauseConversation',
    summary: 'Pause the conversation (admin)',
    input: lifecycleInput,
    roles: OPERATORS,
    handler: PauseConversationHandler,
    http: post('/{conversationId}/pause'),
  }),
  command({
    name: 'resumeConversation',
    summary: 'Resume a paused conversation (admin)',
    input: lifecycleInput,
    roles: OPERATORS,
    handler: ResumeConversationHandler,
    startsTurn: true,
    http: post('/{conversationId}/resume'),
  }),
  command({
    name: 'recoverConversation',
    summary: 'Recover a failed or stuck conversation (admin)',
    input: lifecycleInput,
    roles: OPERATORS,
    handler: RecoverConversationHandler,
    startsTurn: true,
    http: post('/{conversationId}/recover'),
  }),
  command({
    name: 'clearMemory',
    summary: "Clear the conversation's memory: later prompts start after its last message",
    input: clearMemoryInput,
    roles: CLIENTS,
    handler: ClearMemoryHandler,
    http: post('/{conversationId}/memory/clear'),
  }),
  command({
    name: 'eraseConversation',
    summary: 'Erase the conversation: destroy its data key, so its content reads as erased everywhere (admin or owner)',
    input: eraseConversationInput,
    roles: CLIENTS,
    handler: EraseConversationHandler,
    reply: eraseConversationReply,
    http: post('/{conversationId}/erase'),
  }),
  command({
    name: 'eraseSubject',
    summary: 'Erase every conversation of a subject and delete its long-term memories (admin or the subject)',
    input: eraseSubjectInput,
    roles: CLIENTS,
    handler: EraseSubjectHandler,
    reply: eraseSubjectReply,
    http: { method: 'post', path: '/api/v1/subjects/{subject}/erase', status: 200 },
  }),
  command({
    name: 'addToolRepository',
    summary: 'Add a tool repository to the conversation',
    input: toolRepositoryInput,
    roles: CLIENTS,
    handler: AddToolRepositoryHandler,
    http: post('/{conversationId}/tool-repositories', 201),
  }),
  command({
    name: 'generate',
    summary: "Seed 004's one-shot generate: answer, tokens and tool trace, recorded as a conversation",
    input: generateInput,
    roles: CLIENTS,
    handler: GenerateHandler,
    reply: generateReply,
    http: { method: 'post', path: '/internal/llm/generate', status: 200 },
  }),
  command({
    name: 'changeToolRepository',
    summary: 'Change a tool repository',
    input: toolRepositoryInput,
    roles: CLIENTS,
    handler: ChangeToolRepositoryHandler,
    http: route('put', '/{conversationId}/tool-repositories/{repositoryId}'),
  }),
  command({
    name: 'removeToolRepository',
    summary: 'Remove a tool repository',
    input: repositoryRef,
    roles: CLIENTS,
    handler: RemoveToolRepositoryHandler,
    http: route('delete', '/{conversationId}/tool-repositories/{repositoryId}'),
  }),
  command({
    name: 'deleteMemory',
    summary: 'Delete one long-term memory of the caller',
    tag: 'memories',
    input: memoryRef,
    roles: CLIENTS,
    handler: DeleteMemoryHandler,
    reply: z.null(),
    http: { method: 'delete', path: '/api/v1/memories/{memoryId}', status: 204, segmentNames: { memoryId: 'id' } },
  }),
  command({
    name: 'deleteMemories',
    summary: "Delete a subject's long-term memories (e.g. `scope=user&scopeId=u1`); answers how many went",
    tag: 'memories',
    input: deleteMemoriesQuery,
    roles: CLIENTS,
    handler: DeleteMemoriesHandler,
    reply: deleteMemoriesReply,
    http: { method: 'delete', path: '/api/v1/memories', status: 200 },
  }),
];

/** The providers COMMANDS runs on; ConversationModule provides and exports them. */
export const COMMAND_HANDLERS = handlersOf(COMMANDS);

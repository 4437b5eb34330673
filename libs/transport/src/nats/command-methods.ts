import type { Principal } from '@parley/auth';
import {
  addToolRepositoryRequest,
  attachmentSchema,
  changeToolRepositoryRequest,
  lifecycleRequest,
  repositoryIdSchema,
  sendMessageRequest,
  startConversationRequest,
  submitAnswersRequest,
  toolCallDecisionRequest,
  type CommandContext,
  type ConversationCommands,
} from '@parley/conversation';
import { z } from 'zod';
import { rpcMethod, turnMethod, type RpcMethods } from './rpc-method';

/** NATS has no headers for these: the conversation, the tool call and the idempotency key ride in the payload. */
const commandId = z.string().trim().min(1).max(200).optional();
const target = { conversationId: z.uuid(), commandId };
const toolCall = { ...target, toolCallId: z.string().min(1).max(200) };

const context = (p: Principal, commandIdValue: string | undefined, rateLimit?: Promise<void>): CommandContext => ({
  caller: { subject: p.subject, roles: p.roles },
  ...(commandIdValue ? { idempotencyKey: commandIdValue } : {}),
  ...(rateLimit ? { rateLimit } : {}),
});

/** The request schemas of the NATS command methods (HTTP's bodies plus the ids HTTP takes from the path). */
export const COMMAND_SCHEMAS = {
  startConversation: startConversationRequest.extend({ commandId }),
  sendMessage: sendMessageRequest.extend(target),
  sendMessageWithAttachments: sendMessageRequest.extend({ ...target, attachments: z.array(attachmentSchema).min(1) }),
  submitAnswers: submitAnswersRequest.extend(target),
  approveToolCall: toolCallDecisionRequest.extend(toolCall),
  rejectToolCall: toolCallDecisionRequest.extend(toolCall),
  terminateConversation: lifecycleRequest.extend(target),
  killConversation: lifecycleRequest.extend(target),
  pauseConversation: lifecycleRequest.extend(target),
  resumeConversation: lifecycleRequest.extend(target),
  recoverConversation: lifecycleRequest.extend(target),
  addToolRepository: addToolRepositoryRequest.extend(target),
  changeToolRepository: changeToolRepositoryRequest.extend({ ...target, repositoryId: repositoryIdSchema }),
  removeToolRepository: z.strictObject({ ...target, repositoryId: repositoryIdSchema }),
} as const;

/** Kill, pause, resume and recover are an operator's tools, as on HTTP (ConversationCommandsController). */
const ADMIN_ONLY = ['admin'] as const;

/** The command methods on `<prefix>.cmd.<method>` (API.md), over the same ConversationCommands as HTTP. */
export function commandMethods(c: ConversationCommands): RpcMethods {
  const s = COMMAND_SCHEMAS;
  return {
    startConversation: rpcMethod(s.startConversation, (p, { commandId: id, ...input }) =>
      c.start(input, context(p, id)),
    ),
    sendMessage: turnMethod(s.sendMessage, (p, { conversationId, commandId: id, ...input }, limit) =>
      c.sendMessage(conversationId, input, context(p, id, limit)),
    ),
    sendMessageWithAttachments: turnMethod(
      s.sendMessageWithAttachments,
      (p, { conversationId, commandId: id, ...input }, limit) =>
        c.sendMessage(conversationId, input, context(p, id, limit)),
    ),
    submitAnswers: turnMethod(s.submitAnswers, (p, { conversationId, commandId: id, ...input }, limit) =>
      c.submitAnswers(conversationId, input, context(p, id, limit)),
    ),
    approveToolCall: turnMethod(
      s.approveToolCall,
      (p, { conversationId, toolCallId, commandId: id, ...input }, limit) =>
        c.approveToolCall(conversationId, toolCallId, input, context(p, id, limit)),
    ),
    rejectToolCall: turnMethod(s.rejectToolCall, (p, { conversationId, toolCallId, commandId: id, ...input }, limit) =>
      c.rejectToolCall(conversationId, toolCallId, input, context(p, id, limit)),
    ),
    terminateConversation: rpcMethod(s.terminateConversation, (p, { conversationId, commandId: id, ...input }) =>
      c.terminate(conversationId, input, context(p, id)),
    ),
    killConversation: rpcMethod(
      s.killConversation,
      (p, { conversationId, commandId: id, ...input }) => c.kill(conversationId, input, context(p, id)),
      ADMIN_ONLY,
    ),
    pauseConversation: rpcMethod(
      s.pauseConversation,
      (p, { conversationId, commandId: id, ...input }) => c.pause(conversationId, input, context(p, id)),
      ADMIN_ONLY,
    ),
    resumeConversation: turnMethod(
      s.resumeConversation,
      (p, { conversationId, commandId: id, ...input }, limit) => c.resume(conversationId, input, context(p, id, limit)),
      ADMIN_ONLY,
    ),
    recoverConversation: turnMethod(
      s.recoverConversation,
      (p, { conversationId, commandId: id, ...input }, limit) =>
        c.recover(conversationId, input, context(p, id, limit)),
      ADMIN_ONLY,
    ),
    addToolRepository: rpcMethod(s.addToolRepository, (p, { conversationId, commandId: id, ...input }) =>
      c.addToolRepository(conversationId, input, context(p, id)),
    ),
    changeToolRepository: rpcMethod(
      s.changeToolRepository,
      (p, { conversationId, repositoryId, commandId: id, ...input }) =>
        c.changeToolRepository(conversationId, repositoryId, input, context(p, id)),
    ),
    removeToolRepository: rpcMethod(s.removeToolRepository, (p, { conversationId, repositoryId, commandId: id }) =>
      c.removeToolRepository(conversationId, repositoryId, context(p, id)),
    ),
  };
}

import type { CommandContext, CommandReply, TurnReply } from './replies';
import type {
  AddToolRepositoryRequest,
  ChangeToolRepositoryRequest,
  LifecycleRequest,
  SendMessageRequest,
  StartConversationRequest,
  SubmitAnswersRequest,
  ToolCallDecisionRequest,
} from './requests';

/**
 * Every conversation command, as the HTTP controllers, the NATS handlers and the CLI call it.
 * Inputs are already validated against the request schemas.
 */
export interface ConversationCommands {
  start(input: StartConversationRequest, ctx: CommandContext): Promise<CommandReply>;
  sendMessage(conversationId: string, input: SendMessageRequest, ctx: CommandContext): Promise<TurnReply>;
  submitAnswers(conversationId: string, input: SubmitAnswersRequest, ctx: CommandContext): Promise<TurnReply>;
  approveToolCall(
    conversationId: string,
    toolCallId: string,
    input: ToolCallDecisionRequest,
    ctx: CommandContext,
  ): Promise<TurnReply>;
  rejectToolCall(
    conversationId: string,
    toolCallId: string,
    input: ToolCallDecisionRequest,
    ctx: CommandContext,
  ): Promise<TurnReply>;
  terminate(conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<CommandReply>;
  kill(conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<CommandReply>;
  pause(conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<CommandReply>;
  resume(conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<TurnReply>;
  recover(conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<TurnReply>;
  addToolRepository(
    conversationId: string,
    input: AddToolRepositoryRequest,
    ctx: CommandContext,
  ): Promise<CommandReply>;
  changeToolRepository(
    conversationId: string,
    repositoryId: string,
    input: ChangeToolRepositoryRequest,
    ctx: CommandContext,
  ): Promise<CommandReply>;
  removeToolRepository(conversationId: string, repositoryId: string, ctx: CommandContext): Promise<CommandReply>;
}

export const CONVERSATION_COMMANDS = Symbol('parley.conversation-commands');

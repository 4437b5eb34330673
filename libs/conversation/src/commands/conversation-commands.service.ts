import { Inject, Injectable } from '@nestjs/common';
import type { ConversationCommands } from '../api/conversation-commands.port';
import type { CommandContext } from '../api/replies';
import type {
  AddToolRepositoryRequest,
  ChangeToolRepositoryRequest,
  LifecycleRequest,
  SendMessageRequest,
  StartConversationRequest,
  SubmitAnswersRequest,
  ToolCallDecisionRequest,
} from '../api/requests';
import { ChangeLifecycleHandler } from './change-lifecycle/change-lifecycle.handler';
import { DecideToolCallHandler } from './decide-tool-call/decide-tool-call.handler';
import { SendMessageHandler } from './send-message/send-message.handler';
import { StartConversationHandler } from './start-conversation/start-conversation.handler';
import { SubmitAnswersHandler } from './submit-answers/submit-answers.handler';
import { ToolRepositoriesHandler } from './tool-repositories/tool-repositories.handler';

/** The conversation commands as HTTP, NATS and the CLI call them: one method per command. */
@Injectable()
export class ConversationCommandsService implements ConversationCommands {
  constructor(
    @Inject(StartConversationHandler) private readonly starter: StartConversationHandler,
    @Inject(SendMessageHandler) private readonly messages: SendMessageHandler,
    @Inject(SubmitAnswersHandler) private readonly answers: SubmitAnswersHandler,
    @Inject(DecideToolCallHandler) private readonly decisions: DecideToolCallHandler,
    @Inject(ChangeLifecycleHandler) private readonly lifecycle: ChangeLifecycleHandler,
    @Inject(ToolRepositoriesHandler) private readonly repositories: ToolRepositoriesHandler,
  ) {}

  start(input: StartConversationRequest, ctx: CommandContext) {
    return this.starter.execute(input, ctx);
  }
  sendMessage(id: string, input: SendMessageRequest, ctx: CommandContext) {
    return this.messages.execute(id, input, ctx);
  }
  submitAnswers(id: string, input: SubmitAnswersRequest, ctx: CommandContext) {
    return this.answers.execute(id, input, ctx);
  }
  approveToolCall(id: string, toolCallId: string, input: ToolCallDecisionRequest, ctx: CommandContext) {
    return this.decisions.execute('approve', id, toolCallId, input, ctx);
  }
  rejectToolCall(id: string, toolCallId: string, input: ToolCallDecisionRequest, ctx: CommandContext) {
    return this.decisions.execute('reject', id, toolCallId, input, ctx);
  }
  terminate(id: string, input: LifecycleRequest, ctx: CommandContext) {
    return this.lifecycle.end('TerminateConversation', id, input, ctx);
  }
  kill(id: string, input: LifecycleRequest, ctx: CommandContext) {
    return this.lifecycle.end('KillConversation', id, input, ctx);
  }
  pause(id: string, input: LifecycleRequest, ctx: CommandContext) {
    return this.lifecycle.end('PauseConversation', id, input, ctx);
  }
  resume(id: string, _input: LifecycleRequest, ctx: CommandContext) {
    return this.lifecycle.restart('ResumeConversation', id, ctx);
  }
  recover(id: string, _input: LifecycleRequest, ctx: CommandContext) {
    return this.lifecycle.restart('RecoverConversation', id, ctx);
  }
  addToolRepository(id: string, input: AddToolRepositoryRequest, ctx: CommandContext) {
    return this.repositories.add(id, input, ctx);
  }
  changeToolRepository(id: string, repositoryId: string, input: ChangeToolRepositoryRequest, ctx: CommandContext) {
    return this.repositories.change(id, repositoryId, input, ctx);
  }
  removeToolRepository(id: string, repositoryId: string, ctx: CommandContext) {
    return this.repositories.remove(id, repositoryId, ctx);
  }
}

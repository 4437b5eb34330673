import { Controller, Delete, HttpCode, Inject, Param, Post, Put, UseInterceptors } from '@nestjs/common';
import { Roles, StartsTurn } from '@parley/auth';
import {
  type AddToolRepositoryRequest,
  addToolRepositoryRequest,
  type ChangeToolRepositoryRequest,
  changeToolRepositoryRequest,
  CONVERSATION_COMMANDS,
  type CommandContext,
  type ConversationCommands,
  type LifecycleRequest,
  lifecycleRequest,
  type SendMessageRequest,
  sendMessageRequest,
  type StartConversationRequest,
  startConversationRequest,
  type SubmitAnswersRequest,
  submitAnswersRequest,
  type ToolCallDecisionRequest,
  toolCallDecisionRequest,
} from '@parley/conversation';
import { Command, ValidBody } from './command.decorators';
import { TurnReplies } from './turn-replies.interceptor';

/**
 * The conversation commands over HTTP (API.md). Thin: the body is checked and the caller and
 * idempotency key taken before the shared handlers run; TurnReplies answers 202 when a
 * waited-for turn is still running. The commands of `@StartsTurn()` routes await the rate
 * limit's verdict beside their running-turn slot (TurnCommand).
 */
@Controller('api/v1/conversations')
@Roles('client', 'admin')
export class ConversationCommandsController {
  constructor(@Inject(CONVERSATION_COMMANDS) private readonly commands: ConversationCommands) {}

  @Post()
  @HttpCode(201)
  start(@ValidBody(startConversationRequest) body: StartConversationRequest, @Command() ctx: CommandContext) {
    return this.commands.start(body, ctx);
  }

  @Post(':id/messages')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  send(
    @Param('id') id: string,
    @ValidBody(sendMessageRequest) body: SendMessageRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.sendMessage(id, body, ctx);
  }

  @Post(':id/answers')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  answers(
    @Param('id') id: string,
    @ValidBody(submitAnswersRequest) body: SubmitAnswersRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.submitAnswers(id, body, ctx);
  }

  @Post(':id/tool-calls/:toolCallId/approve')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  approve(
    @Param('id') id: string,
    @Param('toolCallId') toolCallId: string,
    @ValidBody(toolCallDecisionRequest) body: ToolCallDecisionRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.approveToolCall(id, toolCallId, body, ctx);
  }

  @Post(':id/tool-calls/:toolCallId/reject')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  reject(
    @Param('id') id: string,
    @Param('toolCallId') toolCallId: string,
    @ValidBody(toolCallDecisionRequest) body: ToolCallDecisionRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.rejectToolCall(id, toolCallId, body, ctx);
  }

  @Post(':id/terminate')
  @HttpCode(200)
  terminate(
    @Param('id') id: string,
    @ValidBody(lifecycleRequest) body: LifecycleRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.terminate(id, body, ctx);
  }

  @Post(':id/kill')
  @HttpCode(200)
  @Roles('admin')
  kill(@Param('id') id: string, @ValidBody(lifecycleRequest) body: LifecycleRequest, @Command() ctx: CommandContext) {
    return this.commands.kill(id, body, ctx);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Roles('admin')
  pause(@Param('id') id: string, @ValidBody(lifecycleRequest) body: LifecycleRequest, @Command() ctx: CommandContext) {
    return this.commands.pause(id, body, ctx);
  }

  @Post(':id/resume')
  @Roles('admin')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  resume(@Param('id') id: string, @ValidBody(lifecycleRequest) body: LifecycleRequest, @Command() ctx: CommandContext) {
    return this.commands.resume(id, body, ctx);
  }

  @Post(':id/recover')
  @Roles('admin')
  @UseInterceptors(TurnReplies)
  @StartsTurn()
  recover(
    @Param('id') id: string,
    @ValidBody(lifecycleRequest) body: LifecycleRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.recover(id, body, ctx);
  }

  @Post(':id/tool-repositories')
  @HttpCode(201)
  addToolRepository(
    @Param('id') id: string,
    @ValidBody(addToolRepositoryRequest) body: AddToolRepositoryRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.addToolRepository(id, body, ctx);
  }

  @Put(':id/tool-repositories/:repositoryId')
  changeToolRepository(
    @Param('id') id: string,
    @Param('repositoryId') repositoryId: string,
    @ValidBody(changeToolRepositoryRequest) body: ChangeToolRepositoryRequest,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.changeToolRepository(id, repositoryId, body, ctx);
  }

  @Delete(':id/tool-repositories/:repositoryId')
  removeToolRepository(
    @Param('id') id: string,
    @Param('repositoryId') repositoryId: string,
    @Command() ctx: CommandContext,
  ) {
    return this.commands.removeToolRepository(id, repositoryId, ctx);
  }
}

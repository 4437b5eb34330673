import { Body, Controller, Delete, Headers, HttpCode, Inject, Param, Post, Put, Res } from '@nestjs/common';
import { CurrentPrincipal, type Principal, Roles } from '@parley/auth';
import {
  addToolRepositoryRequest,
  changeToolRepositoryRequest,
  CONVERSATION_COMMANDS,
  type CommandContext,
  type ConversationCommands,
  lifecycleRequest,
  sendMessageRequest,
  startConversationRequest,
  submitAnswersRequest,
  toolCallDecisionRequest,
  type TurnReply,
} from '@parley/conversation';
import { parseOrThrow } from '@parley/platform';
import type { FastifyReply } from 'fastify';

/**
 * The conversation commands over HTTP (API.md). Thin: validate, call the shared handlers,
 * answer 202 when a waited-for turn is still running.
 */
@Controller('api/v1/conversations')
@Roles('client', 'admin')
export class ConversationCommandsController {
  constructor(@Inject(CONVERSATION_COMMANDS) private readonly commands: ConversationCommands) {}

  @Post()
  @HttpCode(201)
  start(@Body() body: unknown, @CurrentPrincipal() caller: Principal, @Headers('idempotency-key') key?: string) {
    return this.commands.start(parseOrThrow(startConversationRequest, body ?? {}), context(caller, key));
  }

  @Post(':id/messages')
  async send(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    return turn(
      res,
      await this.commands.sendMessage(id, parseOrThrow(sendMessageRequest, body ?? {}), context(caller, key)),
    );
  }

  @Post(':id/answers')
  async answers(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    return turn(
      res,
      await this.commands.submitAnswers(id, parseOrThrow(submitAnswersRequest, body ?? {}), context(caller, key)),
    );
  }

  @Post(':id/tool-calls/:toolCallId/approve')
  async approve(
    @Param('id') id: string,
    @Param('toolCallId') toolCallId: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    const input = parseOrThrow(toolCallDecisionRequest, body ?? {});
    return turn(res, await this.commands.approveToolCall(id, toolCallId, input, context(caller, key)));
  }

  @Post(':id/tool-calls/:toolCallId/reject')
  async reject(
    @Param('id') id: string,
    @Param('toolCallId') toolCallId: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    const input = parseOrThrow(toolCallDecisionRequest, body ?? {});
    return turn(res, await this.commands.rejectToolCall(id, toolCallId, input, context(caller, key)));
  }

  @Post(':id/terminate')
  @HttpCode(200)
  terminate(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    return this.commands.terminate(id, parseOrThrow(lifecycleRequest, body ?? {}), context(caller, key));
  }

  @Post(':id/kill')
  @HttpCode(200)
  @Roles('admin')
  kill(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    return this.commands.kill(id, parseOrThrow(lifecycleRequest, body ?? {}), context(caller, key));
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Roles('admin')
  pause(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    return this.commands.pause(id, parseOrThrow(lifecycleRequest, body ?? {}), context(caller, key));
  }

  @Post(':id/resume')
  @Roles('admin')
  async resume(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    return turn(res, await this.commands.resume(id, parseOrThrow(lifecycleRequest, body ?? {}), context(caller, key)));
  }

  @Post(':id/recover')
  @Roles('admin')
  async recover(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('idempotency-key') key?: string,
  ) {
    return turn(res, await this.commands.recover(id, parseOrThrow(lifecycleRequest, body ?? {}), context(caller, key)));
  }

  @Post(':id/tool-repositories')
  @HttpCode(201)
  addToolRepository(
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    const input = parseOrThrow(addToolRepositoryRequest, body ?? {});
    return this.commands.addToolRepository(id, input, context(caller, key));
  }

  @Put(':id/tool-repositories/:repositoryId')
  changeToolRepository(
    @Param('id') id: string,
    @Param('repositoryId') repositoryId: string,
    @Body() body: unknown,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    const input = parseOrThrow(changeToolRepositoryRequest, body ?? {});
    return this.commands.changeToolRepository(id, repositoryId, input, context(caller, key));
  }

  @Delete(':id/tool-repositories/:repositoryId')
  removeToolRepository(
    @Param('id') id: string,
    @Param('repositoryId') repositoryId: string,
    @CurrentPrincipal() caller: Principal,
    @Headers('idempotency-key') key?: string,
  ) {
    return this.commands.removeToolRepository(id, repositoryId, context(caller, key));
  }
}

function context(caller: Principal, idempotencyKey?: string): CommandContext {
  return { caller, ...(idempotencyKey ? { idempotencyKey } : {}) };
}

/** 200 with the outcome when the turn ended or paused; 202 while it goes on. */
function turn(res: FastifyReply, reply: TurnReply) {
  void res.status(reply.done ? 200 : 202);
  if (!reply.done) return { conversationId: reply.conversationId, status: reply.status, position: reply.position };
  const { done: _done, ...body } = reply;
  return body;
}

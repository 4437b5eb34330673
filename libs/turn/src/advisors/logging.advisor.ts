import { Injectable, Logger } from '@nestjs/common';
import { ParleyAdvisor, type AdvisedReply, type Advisor, type AdvisorContext, type LlmRequest } from '@parley/llm';

const logger = new Logger('Advisor');

/** `logging`: a summary of each model request and reply in the log (sizes and counts, no content). */
@ParleyAdvisor({ name: 'logging', description: 'Logs a summary of each model request and reply.' })
@Injectable()
export class LoggingAdvisor implements Advisor {
  before(request: LlmRequest, ctx: AdvisorContext): void {
    const chars = request.messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0);
    logger.log(
      `${where(ctx)} request to ${request.model}: ${request.messages.length} messages (${chars} characters), ${request.tools.length} tools`,
    );
  }

  after(reply: AdvisedReply, ctx: AdvisorContext): void {
    logger.log(
      `${where(ctx)} reply from ${reply.responseModel ?? 'the model'}: ${reply.finishReason}, ${reply.text.length} characters, ${reply.toolCalls.length} tool calls, ${reply.usage.inputTokens}+${reply.usage.outputTokens} tokens in ${reply.latencyMs} ms`,
    );
  }
}

const where = (ctx: AdvisorContext) =>
  `advisor ${ctx.code}: conversation ${ctx.conversationId} turn ${ctx.turnNo} call ${ctx.callNo}`;

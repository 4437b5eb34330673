import { Injectable } from '@nestjs/common';
import { ParleyAdvisor, type Advisor, type AdvisorContext, type AdvisorOutcome, type LlmRequest } from '@parley/llm';

export const DEFAULT_REFUSAL =
  "I'm unable to respond to that due to sensitive content. Could you rephrase your question or provide more context?";

/**
 * `safeGuard` (Spring AI's SafeGuardAdvisor): when the user's latest message contains one of the
 * config's `sensitiveWords` (case-insensitive), the reply is the config's `failureResponse` (or a
 * default refusal) and the model is not called.
 */
@ParleyAdvisor({
  name: 'safeGuard',
  description: 'Refuses, without calling the model, a message with a sensitive word.',
})
@Injectable()
export class SafeGuardAdvisor implements Advisor {
  before(request: LlmRequest, ctx: AdvisorContext): AdvisorOutcome | void {
    const words = Array.isArray(ctx.config.sensitiveWords) ? (ctx.config.sensitiveWords as unknown[]) : [];
    const latest = [...request.messages].reverse().find((m) => m.role === 'user');
    if (!latest) return;
    const text = (
      typeof latest.content === 'string'
        ? latest.content
        : latest.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ')
    ).toLowerCase();
    const hit = words.find((w): w is string => typeof w === 'string' && !!w && text.includes(w.toLowerCase()));
    if (hit === undefined) return;
    const refusal = typeof ctx.config.failureResponse === 'string' ? ctx.config.failureResponse : DEFAULT_REFUSAL;
    return {
      reply: {
        text: refusal,
        reasoning: '',
        toolCalls: [],
        finishReason: 'ST',
        responseModel: null,
        usage: { inputTokens: 0, outputTokens: 0, estimated: false },
        latencyMs: 0,
      },
      note: { refusal: true, sensitiveWord: hit },
    };
  }
}

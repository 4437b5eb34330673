import type { ModelCallPlan } from '@parley/domain';
import { LlmError, type LlmCallResult } from '@parley/llm';
import { withSpan } from '@parley/observability';
import { countPromptTokens } from '@parley/prompt';
import { ModelCallRecorder } from './model-call-recorder';
import { modelRequest } from './model-request';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

/**
 * One model call of a turn, as `plan` says: the request built, its prompt checked against the
 * budget, the call streamed with every attempt recorded (ModelCallRecorder), and the reply
 * recorded as the decider says (RecordModelReply): stored at once when it ends the turn, staged
 * for the next append when it asks for tools. A call whose every attempt failed ends the turn
 * (GiveUpModelCall).
 */
export async function modelStep(ctx: TurnContext, deps: TurnDeps, plan: ModelCallPlan, signal: AbortSignal) {
  const c = ctx.state;
  const { model, retry } = c.snapshot;
  const request = modelRequest(c, plan, await deps.endpoints.endpointFor(model.providerCode));
  if (plan.checkPrompt) {
    const promptTokens = countPromptTokens(request.messages, request.tools, request.model);
    const refused = ctx.decide({ type: 'CheckPrompt', data: { promptTokens } });
    if (refused.length > 0) return void (await ctx.append(refused));
  }
  const recorder = new ModelCallRecorder(ctx, deps, plan, signal);
  let result: LlmCallResult;
  try {
    result = await withSpan(
      'parley.model_call',
      { 'gen_ai.request.model': model.name, 'parley.provider': model.providerCode },
      () =>
        deps.llm.call(request, {
          signal: AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, plan.deadline - Date.now()))]),
          attempts: plan.attempts,
          baseDelayMs: retry.delayMs,
          hooks: recorder,
        }),
    );
  } catch (err) {
    if (signal.aborted || !(err instanceof LlmError)) throw err;
    return void (await ctx.append(ctx.decide({ type: 'GiveUpModelCall', data: { message: err.message } })));
  }
  recorder.succeeded(result);
  const { text, reasoning, toolCalls, finishReason, responseModel, usage, latencyMs } = result;
  const recorded = [
    ...recorder.drain(),
    ...ctx.decide({
      type: 'RecordModelReply',
      data: {
        callNo: plan.callNo,
        attempt: recorder.attemptOf(result.attempts),
        reply: { text, reasoning, toolCalls, finishReason, responseModel, usage, latencyMs },
      },
    }),
  ];
  // A reply that asks for tools is stored with the turn's next append: before a one-shot tool
  // runs, with a question or an approval request, or with the next model call after idempotent
  // tools. A crash before then only means the call is made again, as for an unfinished call.
  if (toolCalls.length > 0) ctx.stage(recorded);
  else await ctx.append(recorded);
}

import { costOf, type ConversationEvent, type ModelCallPlan } from '@parley/domain';
import { LlmError, type AdvisedReply, type LlmCallResult } from '@parley/llm';
import { withSpan } from '@parley/observability';
import { deadlineTimer } from '@parley/platform';
import { countPromptTokens } from '@parley/prompt';
import { AdvisorChain, AdvisorFailed } from './advisors/advisor-chain';
import { holdBudget } from './budget-hold';
import { ModelCallRecorder } from './model-call-recorder';
import { modelRequest } from './model-request';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';
import { OutputValidator } from './output-validator';

/** The final replies' check against the action's output schema (bounded compiled-schema cache). */
const outputValidator = new OutputValidator();

/**
 * One model call of a turn, as `plan` says: the request built and passed through the action's
 * advisors (which may change it, or answer in the model's place), its prompt checked against
 * the budget, its worst case reserved against the spend budgets (holdBudget) and settled to its
 * cost after, the call streamed with every attempt recorded (ModelCallRecorder), the reply
 * passed back through the advisors, and recorded as the decider says (RecordModelReply): stored
 * at once when it ends the turn, staged for the next append when it asks for tools. A call whose
 * every attempt failed, or whose advisor failed, ends the turn (GiveUpModelCall). What an
 * advisor changed is recorded (AdvisorApplied), so a replay never runs advisors.
 */
export async function modelStep(ctx: TurnContext, deps: TurnDeps, plan: ModelCallPlan, signal: AbortSignal) {
  const c = ctx.state;
  const { model, retry } = c.snapshot;
  const advisors = new AdvisorChain(deps.advisors, c.snapshot.advisors ?? [], {
    conversationId: c.id,
    turnNo: c.turn!.no,
    callNo: plan.callNo,
  });
  const giveUp = (message: string) => ctx.append(ctx.decide({ type: 'GiveUpModelCall', data: { message } }));
  const applied = (data: Parameters<typeof recordApplied>[1]) => recordApplied(ctx, data);
  let advised;
  try {
    advised = await advisors.before(modelRequest(c, plan, await deps.endpoints.endpointFor(model.providerCode)));
  } catch (err) {
    if (err instanceof AdvisorFailed) return void (await giveUp(err.message));
    throw err;
  }
  let { request } = advised;
  if (advised.reply) {
    // An advisor answered in the model's place (a refusal, a cached reply): no call, no cost.
    const reply: AdvisedReply = { ...advised.reply, usage: { inputTokens: 0, outputTokens: 0, estimated: false } };
    return void (await recordReply(ctx, plan, plan.firstAttempt, reply, applied(advised.applied), advisors, giveUp));
  }
  if (advised.applied.length > 0) await ctx.append(applied(advised.applied));
  let promptTokens: number | undefined;
  if (plan.checkPrompt) {
    promptTokens = countPromptTokens(request.messages, request.tools, request.model);
    const refused = ctx.decide({ type: 'CheckPrompt', data: { promptTokens } });
    if (refused.length > 0) return void (await ctx.append(refused));
  }
  const held = await holdBudget(ctx, deps, plan, request, promptTokens);
  if (held.kind === 'refused') return;
  request = held.request;
  const hold = held.kind === 'held' ? held.hold : null;
  const recorder = new ModelCallRecorder(ctx, deps, plan, signal);
  let result: LlmCallResult;
  const deadline = deadlineTimer(plan.deadline);
  try {
    result = await withSpan(
      'parley.model_call',
      { 'gen_ai.request.model': model.name, 'parley.provider': model.providerCode },
      () =>
        deps.llm.call(request, {
          signal: AbortSignal.any([signal, deadline.signal]),
          attempts: plan.attempts,
          baseDelayMs: retry.delayMs,
          hooks: recorder,
        }),
    ).finally(deadline.clear);
  } catch (err) {
    // A failed call has no usage to pay for: its hold ends (a crash's lapses, or the next reservation releases it).
    await hold?.release(signal.aborted ? 'released: the call was stopped' : 'released: the call failed');
    if (signal.aborted || !(err instanceof LlmError)) throw err;
    return void (await giveUp(err.message));
  }
  await hold?.settle(costOf(model, result.usage));
  recorder.succeeded(result);
  const { attempts, ...reply } = result;
  await recordReply(ctx, plan, recorder.attemptOf(attempts), reply, recorder.drain(), advisors, giveUp);
}

/**
 * The reply after the advisors' `after`, recorded with `pending` (what is not stored yet). A
 * reply that asks for tools is stored with the turn's next append: before a one-shot tool runs,
 * with a question or an approval request, or with the next model call after idempotent tools. A
 * crash before then only means the call is made again, as for an unfinished call.
 */
async function recordReply(
  ctx: TurnContext,
  plan: ModelCallPlan,
  attempt: number,
  reply: AdvisedReply,
  pending: ConversationEvent[],
  advisors: AdvisorChain,
  giveUp: (message: string) => Promise<unknown>,
): Promise<void> {
  let after;
  try {
    after = await advisors.after(reply);
  } catch (err) {
    if (!(err instanceof AdvisorFailed)) throw err;
    if (pending.length > 0) await ctx.append(pending);
    return void (await giveUp(err.message));
  }
  const { text, reasoning, toolCalls, finishReason, responseModel, usage, latencyMs } = after.reply;
  // A reply that ends the turn is checked here, once; the decider repairs or fails from what it records.
  const schema = ctx.state.snapshot.outputSchema;
  const outputCheck = schema && toolCalls.length === 0 ? outputValidator.check(text, schema) : undefined;
  const recorded = [
    ...pending,
    ...recordApplied(ctx, after.applied),
    ...ctx.decide({
      type: 'RecordModelReply',
      data: {
        callNo: plan.callNo,
        attempt,
        reply: { text, reasoning, toolCalls, finishReason, responseModel, usage, latencyMs },
        ...(outputCheck ? { outputCheck } : {}),
      },
    }),
  ];
  if (toolCalls.length > 0) ctx.stage(recorded);
  else await ctx.append(recorded);
}

function recordApplied(
  ctx: TurnContext,
  data: Awaited<ReturnType<AdvisorChain['before']>>['applied'],
): ConversationEvent[] {
  return data.flatMap((d) => ctx.decide({ type: 'RecordAdvisorApplied', data: d }));
}

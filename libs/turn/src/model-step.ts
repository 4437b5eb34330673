import type { ConversationEvent, ExistingConversation } from '@parley/conversation';
import { availableTools } from '@parley/conversation';
import { Logger } from '@nestjs/common';
import { withSpan } from '@parley/observability';
import { LlmError, type LlmCallResult, type LlmRequest } from '@parley/llm';
import { countPromptTokens } from '@parley/prompt';
import { buildMessages } from './build-messages';
import { ChunkBuffer } from './chunk-buffer';
import type { TurnContext } from './turn-context';
import { overTime, type TurnDeps, type TurnEnd } from './turn-ports';

const logger = new Logger('ModelCall');

/**
 * One model call of a turn: budgets checked, the request built from the snapshot and memory,
 * streamed with each attempt recorded (ModelCallStarted, ChunksReceived batches, ModelCallFailed,
 * ModelCallRetryScheduled) and the reply recorded with its usage and cost: stored at once when it
 * ends the turn, staged for the next append when it asks for tools.
 * Returns a TurnEnd when the turn is over, or null when tool calls follow.
 */
export async function modelStep(
  ctx: TurnContext,
  deps: TurnDeps,
  signal: AbortSignal,
  deadline: number,
): Promise<TurnEnd | null> {
  const c = ctx.state;
  const turn = c.turn!;
  const { limits, model, options, retry } = c.snapshot;
  const request: LlmRequest = {
    provider: await deps.endpoints.endpointFor(model.providerCode),
    model: model.name,
    messages: buildMessages(c),
    tools: availableTools(c).map(({ name, description, parameters }) => ({ name, description, parameters })),
    options: { ...options, ...completionCap(options.maxTokens, limits.maxCompletionTokens, turn.usage.outputTokens) },
  };
  const budget = overBudget(c, request);
  if (budget) return { kind: 'failed', code: 'LLM_LIMIT_EXCEEDED', message: budget };

  const callNo = turn.openModelCall?.callNo ?? turn.modelCalls + 1;
  const firstAttempt = turn.openModelCall ? turn.openModelCall.attempt + 1 : 1;
  let buffer: ChunkBuffer | null = null;
  let result: LlmCallResult;
  try {
    result = await withSpan(
      'parley.model_call',
      { 'gen_ai.request.model': model.name, 'parley.provider': model.providerCode },
      () =>
        deps.llm.call(request, {
          // The turn's time budget bounds the attempts and the waits between them.
          signal: AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]),
          attempts: Math.max(1, retry.count - firstAttempt + 1),
          baseDelayMs: retry.delayMs,
          hooks: {
            onAttemptStart: (n) => {
              const attempt = firstAttempt + n - 1;
              buffer?.discard();
              buffer = new ChunkBuffer(
                ctx,
                { turnNo: turn.no, callNo, attempt },
                {
                  type: 'ModelCallStarted',
                  data: { turnNo: turn.no, callNo, attempt, model: model.name, provider: model.providerCode },
                },
              );
            },
            onEvent: (event, n) => {
              if (event.type !== 'text' && event.type !== 'reasoning') return;
              buffer?.add(event.type, event.delta);
              deps.live?.publish(c.id, {
                turnNo: turn.no,
                callNo,
                attempt: firstAttempt + n - 1,
                [event.type]: event.delta,
              });
            },
            onAttemptFailed: async (error, failure) => {
              const unsaved = buffer?.drain() ?? [];
              const attempt = firstAttempt + failure.attempt - 1;
              logger.warn(
                `model ${model.name} (${model.providerCode}) call ${callNo} attempt ${attempt} of turn ${turn.no} in ${c.id} failed (${error.kind}${failure.willRetry ? `, retrying in ${failure.delayMs} ms` : ''}): ${error.message}`,
              );
              const events: ConversationEvent[] = [
                ...unsaved,
                {
                  type: 'ModelCallFailed',
                  data: {
                    turnNo: turn.no,
                    callNo,
                    attempt,
                    kind: error.kind,
                    message: error.message,
                    ...(error.status === undefined ? {} : { status: error.status }),
                    retryable: error.retryable,
                  },
                },
              ];
              if (failure.willRetry)
                events.push({
                  type: 'ModelCallRetryScheduled',
                  data: { turnNo: turn.no, callNo, attempt: attempt + 1, delayMs: failure.delayMs },
                });
              deps.metrics?.recordLlmRequest(
                {
                  provider: model.providerCode,
                  model: model.name,
                  outcome: error.kind === 'timeout' ? 'timeout' : 'error',
                },
                0,
              );
              if (!signal.aborted) await ctx.append(events);
            },
          },
        }),
    );
  } catch (err) {
    if (signal.aborted || !(err instanceof LlmError)) throw err;
    if (Date.now() >= deadline) {
      return overTime(limits.turnTimeoutMs);
    }
    return { kind: 'failed', code: 'LLM_RUNTIME_ERROR', message: `The model call failed: ${err.message}` };
  }

  const cost = result.usage.inputTokens * model.inputTokenPrice + result.usage.outputTokens * model.outputTokenPrice;
  const attempt = firstAttempt + result.attempts - 1;
  const recorded: ConversationEvent[] = [
    ...((buffer as ChunkBuffer | null)?.drain() ?? []),
    {
      type: 'ModelCallCompleted',
      data: {
        turnNo: turn.no,
        callNo,
        attempt,
        finishReason: result.finishReason,
        responseModel: result.responseModel,
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
        usageEstimated: result.usage.estimated,
        cost,
        latencyMs: result.latencyMs,
      },
    },
    {
      type: 'MessageRecorded',
      data: {
        sequence: (c.transcript.at(-1)?.sequence ?? 0) + 1,
        role: 'AS',
        content: result.text || (result.toolCalls.length ? null : ''),
        turnNo: turn.no,
        tokenCount: result.usage.outputTokens,
        ...(result.toolCalls.length ? { toolCalls: result.toolCalls } : {}),
        ...(result.reasoning ? { reasoning: result.reasoning } : {}),
      },
    },
  ];
  deps.metrics?.recordLlmRequest({ provider: model.providerCode, model: model.name, outcome: 'ok' }, result.latencyMs);
  deps.metrics?.recordTokenUsage(model.name, { input: result.usage.inputTokens, output: result.usage.outputTokens });
  if (result.toolCalls.length === 0) {
    recorded.push({
      type: 'ConversationCompleted',
      data: {
        turnNo: turn.no,
        finishReason: result.finishReason,
        reply: result.text,
        responseModel: result.responseModel,
      },
    });
  }
  if (result.toolCalls.length === 0) {
    await ctx.append(recorded);
    return { kind: 'completed' };
  }
  // A reply that asks for tools is stored with the turn's next append: before a one-shot tool
  // runs, with a question or an approval request, or with the next model call after idempotent
  // tools. A crash before then only means the call is made again, as for an unfinished call.
  ctx.stage(recorded);
  return null;
}

/** The completion cap of this call: the configured max tokens, within what the turn's completion budget has left. */
function completionCap(maxTokens: number | undefined, budget: number | null, used: number): { maxTokens?: number } {
  if (budget === null) return maxTokens === undefined ? {} : { maxTokens };
  const left = Math.max(1, budget - used);
  return { maxTokens: maxTokens === undefined ? left : Math.min(maxTokens, left) };
}

function overBudget(c: ExistingConversation, request: LlmRequest): string | null {
  const { limits } = c.snapshot;
  const used = c.turn!.usage;
  if (limits.maxCompletionTokens !== null && used.outputTokens >= limits.maxCompletionTokens) {
    return `The turn used its completion token budget (${used.outputTokens} of ${limits.maxCompletionTokens}).`;
  }
  if (limits.maxTotalTokens !== null && used.inputTokens + used.outputTokens >= limits.maxTotalTokens) {
    return `The turn used its total token budget (${used.inputTokens + used.outputTokens} of ${limits.maxTotalTokens}).`;
  }
  if (limits.maxPromptTokens !== null) {
    const prompt = countPromptTokens(request.messages, request.tools, request.model);
    if (prompt > limits.maxPromptTokens)
      return `The prompt has ${prompt} tokens, over the budget of ${limits.maxPromptTokens}.`;
  }
  return null;
}

import type { SummaryPlan, TranscriptEntry } from '@parley/domain';
import { LlmError, type LlmMessage } from '@parley/llm';
import { withSpan } from '@parley/observability';
import { deadlineTimer } from '@parley/platform';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

/** The system prompt of a summarisation call. */
export const SUMMARY_SYSTEM_PROMPT =
  'You summarise a conversation so that it can go on without its earlier messages. Keep every fact, ' +
  'decision, name, number and open question the assistant may need later; leave out pleasantries. ' +
  'Fold the previous summary, if there is one, into yours. Answer with the summary only, in plain prose.';

const ROLE_NAMES: Record<string, string> = { US: 'User', AS: 'Assistant', TO: 'Tool result' };

/** One transcript entry as a line of the text the model summarises. */
function line(m: TranscriptEntry): string {
  const calls = (m.toolCalls ?? []).map((t) => ` [calls ${t.name}(${t.arguments})]`).join('');
  return `${ROLE_NAMES[m.role] ?? m.role}: ${m.content ?? ''}${calls}`;
}

/** The summarisation request's messages: its system prompt, then the previous summary and the messages to fold in. */
export function summaryMessages(plan: SummaryPlan): LlmMessage[] {
  const parts = [
    ...(plan.previousSummary ? [`Previous summary:\n${plan.previousSummary}`] : []),
    `Messages:\n${plan.entries.map(line).join('\n')}`,
  ];
  return [
    { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/**
 * The SUMMARY memory's model call: through the same adapter, provider and retries as the turn's
 * own calls, without tools. Its summary, usage and cost are recorded as MemorySummarized; a call
 * whose every attempt failed fails the turn as a model call would (GiveUpModelCall).
 */
export async function summaryStep(ctx: TurnContext, deps: TurnDeps, plan: SummaryPlan, signal: AbortSignal) {
  const { model, retry } = ctx.state.snapshot;
  const provider = await deps.endpoints.endpointFor(model.providerCode);
  const request = { provider, model: model.name, messages: summaryMessages(plan), tools: [], options: {} };
  const deadline = deadlineTimer(plan.deadline);
  try {
    const result = await withSpan(
      'parley.memory_summary',
      { 'gen_ai.request.model': model.name, 'parley.provider': model.providerCode },
      () =>
        deps.llm.call(request, {
          signal: AbortSignal.any([signal, deadline.signal]),
          attempts: plan.attempts,
          baseDelayMs: retry.delayMs,
        }),
    ).finally(deadline.clear);
    deps.metrics?.recordLlmRequest(
      { provider: model.providerCode, model: model.name, outcome: 'ok' },
      result.latencyMs,
    );
    deps.metrics?.recordTokenUsage(model.name, { input: result.usage.inputTokens, output: result.usage.outputTokens });
    const { fromSequence, throughSequence } = plan;
    const { text, responseModel, usage, latencyMs } = result;
    await ctx.append(
      ctx.decide({
        type: 'RecordMemorySummary',
        data: { fromSequence, throughSequence, summary: text.trim(), responseModel, usage, latencyMs },
      }),
    );
  } catch (err) {
    if (signal.aborted || !(err instanceof LlmError)) throw err;
    await ctx.append(
      ctx.decide({ type: 'GiveUpModelCall', data: { message: `summarising the memory: ${err.message}` } }),
    );
  }
}

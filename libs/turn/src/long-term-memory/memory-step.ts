import type { ToolOutcome } from '@parley/core';
import type { EmbeddingUsage, RecallPlan, RecalledMemory, TurnStep } from '@parley/domain';
import type { MemoryHit } from '@parley/knowledge';
import { withSpan } from '@parley/observability';
import type { TurnContext } from '../turn-context';
import type { TurnDeps } from '../turn-ports';

const hitOf = (h: MemoryHit): RecalledMemory => ({
  memoryId: h.memory.id,
  scope: h.memory.scope,
  text: h.memory.text,
  importance: h.memory.importance,
  similarity: round(h.similarity),
  score: round(h.score),
});

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** The recall's text as the model reads it: one fact a line, best first. */
export const recallOutput = (hits: RecalledMemory[]): string =>
  hits.length === 0
    ? 'No remembered facts match.'
    : hits.map((h, i) => `${i + 1}. [${h.scope}] ${h.text} (score ${h.score})`).join('\n');

const ok = (output: string, started: number): ToolOutcome => ({
  ok: true,
  output,
  truncated: false,
  durationMs: Math.round(performance.now() - started),
  returnDirect: false,
  skipResponse: false,
});

/**
 * A `remember` or `recall` call: the fact stored (or refreshed) or the facts found, recorded with
 * the call's outcome (MemoryRemembered / MemoriesRecalled, then ToolCallCompleted). Both may run
 * again after a crash, so, like an idempotent tool, their events go with the turn's next append.
 * Memory that cannot be reached (the embedding call or the database) is a failed call the model reads.
 */
export async function memoryToolStep(
  ctx: TurnContext,
  deps: TurnDeps,
  step: Extract<TurnStep, { kind: 'memory_tool' }>,
  signal: AbortSignal,
): Promise<void> {
  const { call, request } = step;
  const settings = ctx.state.snapshot.longTermMemory;
  ctx.stage(ctx.decide({ type: 'StartToolCall', data: { toolCallId: call.id } }));
  const started = performance.now();
  const outcome = await withSpan('parley.memory', { 'parley.tool': call.name }, async () => {
    if (!settings || !deps.memory) throw new Error('long-term memory is not configured for this action');
    if (request.op === 'remember') {
      const { memory, updated, embedding } = await deps.memory.remember(
        settings.embedding,
        request,
        { conversationId: ctx.conversationId, toolCallId: call.id },
        signal,
      );
      const remembered = {
        memoryId: memory.id,
        scope: memory.scope,
        scopeId: memory.scopeId,
        text: memory.text,
        importance: memory.importance,
        expiresAt: memory.expiresAt,
        updated,
        embedding,
      };
      const output = `${updated ? 'Already remembered; refreshed' : 'Remembered'} (${memory.scope}): ${memory.text}`;
      return { outcome: ok(output, started), remembered };
    }
    const found = await deps.memory.recall(settings.embedding, request.query, request.limit, request.scopes, signal);
    const hits = found.hits.map(hitOf);
    return {
      outcome: ok(recallOutput(hits), started),
      recalled: { query: request.query, hits, embedding: found.embedding },
    };
  }).catch((err: unknown) => {
    if (signal.aborted) throw err;
    const message = `Long-term memory could not be reached: ${(err as Error).message}`;
    return {
      outcome: {
        ok: false,
        error: { code: 'UNAVAILABLE', message },
        durationMs: Math.round(performance.now() - started),
      } as ToolOutcome,
    };
  });
  if (signal.aborted) return;
  ctx.stage(ctx.decide({ type: 'RecordMemoryToolOutcome', data: { toolCallId: call.id, ...outcome } }));
}

/**
 * The recall before the turn's first model call (an action's `autoRecall`): the user's latest
 * message is the query. Recorded as MemoriesRecalled (auto), which the prompt's memory block is
 * built from; a recall that fails records its error and no facts, and the turn goes on.
 */
export async function autoRecallStep(ctx: TurnContext, deps: TurnDeps, plan: RecallPlan, signal: AbortSignal) {
  const settings = ctx.state.snapshot.longTermMemory;
  let hits: RecalledMemory[] = [];
  let embedding: EmbeddingUsage | undefined;
  let error: string | undefined;
  try {
    if (!settings || !deps.memory) throw new Error('long-term memory is not configured for this action');
    const found = await withSpan('parley.memory_recall', {}, () =>
      deps.memory!.recall(settings.embedding, plan.query, plan.limit, plan.scopes, signal),
    );
    hits = found.hits.map(hitOf);
    embedding = found.embedding;
  } catch (err) {
    if (signal.aborted) throw err;
    error = (err as Error).message;
  }
  if (signal.aborted) return;
  ctx.stage(
    ctx.decide({
      type: 'RecordAutoRecall',
      data: { query: plan.query, hits, ...(error ? { error } : {}), ...(embedding ? { embedding } : {}) },
    }),
  );
}

import { Inject, Injectable } from '@nestjs/common';
import { requireRoles } from '@parley/auth';
import { DomainError, type ConversationSnapshot } from '@parley/core';
import type { ContextRetrieved, HistoryMessage, TranscriptEntry } from '@parley/domain';
import { runWithContext } from '@parley/observability';
import { countTokens, fitContext, type ContextChunk } from '@parley/prompt';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { OperationContext } from '../../api/operation';
import { ConversationRepository } from '../../repository/conversation.repository';
import { SNAPSHOT_SOURCE, type SnapshotSource } from '../snapshot-source';
import { TurnCommand } from '../turn-command';

/** The catalog agent and action generate runs (kept from LLM_RUNTIME_URL, or applied by an operator). */
export const GENERATE_AGENT_CODE = 'GENERATE';
export const GENERATE_ACTION_CODE = 'GENERATE';

const text = z.string().max(200_000);

/** Seed 004 §4's request, field for field. */
export const generateInput = z.strictObject({
  mode: z.enum(['chat', 'rag']),
  system_prompt: text.optional(),
  messages: z
    .array(z.strictObject({ role: z.enum(['user', 'assistant']), content: text }))
    .min(1)
    .max(200),
  context_chunks: z
    .array(
      z.strictObject({
        doc_id: z.string().min(1).max(200),
        section_id: z.string().min(1).max(200),
        text,
        page_start: z.number().int().min(0).nullish(),
        page_end: z.number().int().min(0).nullish(),
      }),
    )
    .max(200)
    .default([]),
  generation_params: z
    .strictObject({
      max_tokens: z.number().int().min(1).optional(),
      temperature: z.number().min(0).max(2).optional(),
      top_p: z.number().min(0).max(1).optional(),
      presence_penalty: z.number().min(-2).max(2).optional(),
      frequency_penalty: z.number().min(-2).max(2).optional(),
      stop: z.array(z.string().min(1).max(200)).max(4).optional(),
    })
    .default({}),
  trace_id: z.string().min(1).max(128).optional(),
});

/** What the schema cannot say alone: the turn is the last message, a user's; chunks belong to rag. */
function checkShape(input: GenerateInput): void {
  const problems = [];
  const last = input.messages.at(-1)!;
  if (last.role !== 'user' || !last.content.trim())
    problems.push({
      path: `messages.${input.messages.length - 1}`,
      message: 'the last message must be a non-empty user message',
    });
  if (input.mode === 'chat' && input.context_chunks.length > 0)
    problems.push({ path: 'context_chunks', message: "context chunks are for mode 'rag'" });
  if (problems.length > 0) throw DomainError.validation(problems, `The request is not valid: ${problems[0].message}.`);
}

export type GenerateInput = z.output<typeof generateInput>;

/** Seed 004 §4's response, plus the conversation the call was recorded as. */
export interface GenerateReply {
  answer: string;
  used_tokens: { prompt: number; completion: number };
  tools_called: { name: string; arguments: unknown; result_summary: string }[];
  meta: {
    model_name: string;
    latency_ms: number;
    tool_steps: number;
    trace_id: string | null;
    conversation_id: string;
  };
}

export const generateReply = z.object({
  answer: z.string(),
  used_tokens: z.object({ prompt: z.number().int(), completion: z.number().int() }),
  tools_called: z.array(z.object({ name: z.string(), arguments: z.unknown(), result_summary: z.string() })),
  meta: z.object({
    model_name: z.string(),
    latency_ms: z.number().int(),
    tool_steps: z.number().int(),
    trace_id: z.string().nullable(),
    conversation_id: z.uuid(),
  }),
});

/**
 * How long the GENERATE action's resolved snapshot is reused for a caller: a catalog change (or an
 * MCP server's new tool) reaches generate calls within this, as provider keys reach model calls.
 */
export const GENERATE_SNAPSHOT_TTL_MS = 5_000;

/**
 * Namespace for the conversations of generate calls sent with an Idempotency-Key: a retried call
 * finds the first one's conversation, and is answered from it.
 */
const IDEMPOTENT_GENERATE = 'c4a7e2f0-58d1-5b3e-9f26-0d8b61a3e7c5';

/** How much of a tool's result `result_summary` keeps. */
const SUMMARY_CHARS = 200;

/**
 * Seed 004's `POST /internal/llm/generate`: stateless for its caller, recorded as a one-shot
 * conversation of the GENERATE action. The request's system prompt and generation parameters
 * override the action's snapshot; its earlier messages are the conversation's history; its last
 * user message starts the one turn, with the context chunks (rag) recorded as that turn's
 * context block; the turn runs to its end as any turn does (tool loop, limits, retries, model
 * call records), and its outcome is the reply, or an error with the failure's status.
 */
@Injectable()
export class GenerateHandler {
  /** Per caller (subject and roles: the model's and provider's ACL depend on them), bounded. */
  private readonly snapshotsOf = new LRUCache<string, ConversationSnapshot, OperationContext['caller']>({
    max: 1_000,
    ttl: GENERATE_SNAPSHOT_TTL_MS,
    fetchMethod: (_key, _stale, { context }) =>
      this.snapshots.resolve(GENERATE_AGENT_CODE, GENERATE_ACTION_CODE, context),
  });

  constructor(
    @Inject(TurnCommand) private readonly turn: TurnCommand,
    @Inject(SNAPSHOT_SOURCE) private readonly snapshots: SnapshotSource,
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
  ) {}

  execute(input: GenerateInput, ctx: OperationContext): Promise<GenerateReply> {
    requireRoles(ctx.caller, ['client', 'admin']);
    checkShape(input);
    const run = () => this.generate(input, ctx);
    // The caller's trace id labels every log line of the call, the model steps' included.
    return input.trace_id ? runWithContext({ traceId: input.trace_id }, run) : run();
  }

  private async generate(input: GenerateInput, ctx: OperationContext): Promise<GenerateReply> {
    const startedAt = Date.now();
    const caller = ctx.caller;
    const base = (await this.snapshotsOf.fetch(`${caller.subject}\u0000${[...caller.roles].sort().join(',')}`, {
      context: caller,
    }))!;
    const snapshot = withRequest(base, input);
    const modelName = snapshot.model.name;
    const count = (s: string) => countTokens(s, modelName);
    const earlier = input.messages.slice(0, -1);
    const last = input.messages.at(-1)!.content;
    const history: HistoryMessage[] = earlier
      .filter((m) => m.content.trim())
      .map((m) => ({ role: m.role === 'user' ? 'US' : 'AS', content: m.content, tokenCount: count(m.content) }));
    const tokenCount = count(last);
    const context =
      input.mode === 'rag' && input.context_chunks.length > 0
        ? contextOf(input, last, snapshot, count, [snapshot.systemPrompt, ...input.messages.map((m) => m.content)])
        : undefined;

    // With an Idempotency-Key the call's conversation is the key's: the same key and request is
    // answered from the first call (nothing appended, the model not called again); the same key
    // with another request is IDEMPOTENCY_KEY_REUSED.
    const conversationId = this.repository.idForNew(IDEMPOTENT_GENERATE, caller.subject, ctx.idempotencyKey);
    // One append starts the conversation, records its history and starts the turn.
    const body = { type: 'StartConversation' as const, generate: input };
    const { reply, state } = await this.turn.runFolded(conversationId, ctx, { wait: true }, body, (meta) => ({
      type: 'StartConversation',
      data: {
        conversationId,
        agentCode: GENERATE_AGENT_CODE,
        actionCode: GENERATE_ACTION_CODE,
        metadata: { generate: true, mode: input.mode, ...(input.trace_id ? { traceId: input.trace_id } : {}) },
        snapshot,
        history,
        message: { content: last, tokenCount, ...(context ? { context } : {}) },
      },
      meta,
    }));
    if (!reply.done)
      throw new DomainError(
        'LLM_RUNTIME_ERROR',
        'The model did not answer within the turn time limit.',
        undefined,
        504,
      );
    if (reply.status === 'FA') throw failureOf(reply.error, await this.timedOut(conversationId));
    if (reply.status !== 'CO')
      throw new DomainError(
        'LLM_RUNTIME_ERROR',
        `The call stopped waiting (${reply.status}), which generate cannot answer.`,
      );
    // The turn's own end state: its transcript names the tools called, with no stream read again.
    const entries = state.status === 'none' ? [] : state.transcript.filter((e) => e.turnNo === 1);
    return {
      answer: reply.reply ?? '',
      used_tokens: { prompt: reply.usage.inputTokens, completion: reply.usage.outputTokens },
      tools_called: toolsCalled(entries),
      meta: {
        model_name: modelName,
        latency_ms: Date.now() - startedAt,
        tool_steps: entries.filter((e) => e.role === 'AS' && (e.toolCalls?.length ?? 0) > 0).length,
        trace_id: input.trace_id ?? null,
        conversation_id: conversationId,
      },
    };
  }

  /** Whether the failed call's last model attempt ran out of time (ModelCallFailed, kind `timeout`). */
  private async timedOut(conversationId: string): Promise<boolean> {
    const events = await this.repository.eventsFrom(conversationId, 0n);
    const failed = events.filter((e) => e.type === 'ModelCallFailed').at(-1);
    return (failed?.data as { kind?: string } | undefined)?.kind === 'timeout';
  }
}

/** The action's snapshot with the request's system prompt and generation parameters, and a tool output over its limit ending the call. */
function withRequest(base: ConversationSnapshot, input: GenerateInput): ConversationSnapshot {
  const p = input.generation_params;
  const options = { ...base.options };
  if (p.max_tokens !== undefined) options.maxTokens = p.max_tokens;
  if (p.temperature !== undefined) options.temperature = p.temperature;
  if (p.top_p !== undefined) options.topP = p.top_p;
  if (p.presence_penalty !== undefined) options.presencePenalty = p.presence_penalty;
  if (p.frequency_penalty !== undefined) options.frequencyPenalty = p.frequency_penalty;
  if (p.stop !== undefined) options.stop = p.stop;
  // Seed 004 §9.3: too much text from a tool ends the call (422), where a conversation cuts it.
  const limits = { ...base.limits, toolOutputOverflow: 'fail' as const };
  return { ...base, options, limits, systemPrompt: input.system_prompt ?? base.systemPrompt };
}

/**
 * The context chunks as the turn's context block (seed 004 §5.1: after the system prompt, before
 * the user message), merged and trimmed by fitContext to what the prompt budget leaves (§7).
 */
function contextOf(
  input: GenerateInput,
  query: string,
  snapshot: ConversationSnapshot,
  count: (s: string) => number,
  prompt: string[],
): Omit<ContextRetrieved['data'], 'turnNo'> {
  const chunks: ContextChunk[] = input.context_chunks.map((c) => ({
    id: `${c.doc_id}#${c.section_id}`,
    documentId: c.doc_id,
    text: c.text,
    title: `${c.doc_id}/${c.section_id}`,
    ...(c.page_start != null ? { pageStart: c.page_start } : {}),
    ...(c.page_end != null ? { pageEnd: c.page_end } : {}),
  }));
  const promptTokens = snapshot.limits.maxPromptTokens;
  // Each message is framed by a few tokens; the block is one more message.
  const withoutContext = prompt.reduce((sum, s) => sum + count(s) + 4, 0);
  const fitted = fitContext(chunks, {
    maxTokens: promptTokens === null ? null : Math.max(0, promptTokens - withoutContext - 4),
    countTokens: count,
  });
  const byId = new Map(input.context_chunks.map((c) => [`${c.doc_id}#${c.section_id}`, c]));
  return {
    query,
    searches: [],
    chunks: fitted.kept.map((k) => ({
      collection: 'request',
      documentId: k.documentId,
      chunkId: byId.get(k.id)!.section_id,
      title: k.title ?? null,
      score: 1,
      chunkIndex: null,
      text: k.text,
      tokens: count(k.text),
    })),
    blocks: fitted.blocks.length,
    dropped: fitted.dropped.map((d) => ({
      collection: 'request',
      chunkId: byId.get(d.id)!.section_id,
      documentId: d.documentId,
      score: d.score,
      reason: d.reason,
    })),
    context: fitted.text,
    budget: { promptTokens, withoutContext, context: fitted.tokens },
  };
}

/** The turn's tool calls with their results, in the order the model asked for them. */
function toolsCalled(entries: TranscriptEntry[]): GenerateReply['tools_called'] {
  const results = new Map(entries.filter((e) => e.role === 'TO').map((e) => [e.toolCallId, e.content ?? '']));
  return entries.flatMap((e) =>
    (e.toolCalls ?? []).map((call) => ({
      name: call.name,
      arguments: parsed(call.arguments),
      result_summary: summary(results.get(call.id) ?? ''),
    })),
  );
}

const parsed = (json: string): unknown => {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
};

const summary = (s: string): string => (s.length <= SUMMARY_CHARS ? s : `${s.slice(0, SUMMARY_CHARS - 1)}…`);

/**
 * The failed turn as generate's error (seed 004 §9): a timeout is LLM_RUNTIME_ERROR with 504,
 * two tool errors in a row LLM_RUNTIME_ERROR (the tools, not a limit, failed), limits 422, a
 * spend budget 402 with its details.
 */
function failureOf(
  error: { code: string; message: string; details?: Record<string, unknown> } | undefined,
  timedOut: boolean,
): DomainError {
  const message = error?.message ?? 'The call failed.';
  if (error?.code === 'BUDGET_EXCEEDED') return new DomainError('BUDGET_EXCEEDED', message, error.details);
  if (error?.code === 'LLM_LIMIT_EXCEEDED') return new DomainError('LLM_LIMIT_EXCEEDED', message);
  if (error?.code === 'LLM_RUNTIME_ERROR' && timedOut)
    return new DomainError('LLM_RUNTIME_ERROR', message, undefined, 504);
  return new DomainError('LLM_RUNTIME_ERROR', message);
}

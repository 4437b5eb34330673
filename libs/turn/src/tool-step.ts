import { Logger } from '@nestjs/common';
import type { ToolErrorCode } from '@parley/core';
import {
  availableTools,
  type ConversationEvent,
  type ExistingConversation,
  type Question,
  repositoryOf,
  type TurnToolCall,
} from '@parley/conversation';
import { type ToolDefinition } from '@parley/core';
import { withSpan } from '@parley/observability';
import type { ToolOutcome } from '@parley/tools';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

const logger = new Logger('TurnRunner');

const RESOLVED = new Set(['completed', 'failed', 'rejected', 'answered']);

export const unresolvedCalls = (c: ExistingConversation): TurnToolCall[] =>
  c.turn?.toolCalls.filter((t) => !RESOLVED.has(t.status)) ?? [];

/**
 * Works through the tool calls of the last model reply, in order: refuses tools the action does
 * not allow, asks the human (AskUserQuestion, approvals), discloses skills, and runs the rest.
 * Returns 'wait' when the conversation now waits for a human.
 */
export async function toolStep(ctx: TurnContext, deps: TurnDeps, signal: AbortSignal): Promise<'continue' | 'wait'> {
  const needApproval: TurnToolCall[] = [];
  for (const call of unresolvedCalls(ctx.state)) {
    if (signal.aborted) return 'continue';
    const c = ctx.state;
    const turnNo = c.turn!.no;
    const def = availableTools(c).find((t) => t.name === call.name);
    if (!def) {
      await fail(ctx, call, 'NOT_ALLOWED', `Tool '${call.name}' is not available to this action.`, 0);
      continue;
    }
    if (call.status === 'asked' || call.status === 'awaiting_approval') return 'wait';
    if (def.kind === 'ask_user_question') {
      if (await ask(ctx, deps, call)) return 'wait';
      continue;
    }
    if (def.kind === 'skill') {
      await disclose(ctx, call, def);
      continue;
    }
    if (call.status === 'started' && !def.idempotent) {
      await fail(
        ctx,
        call,
        'INTERRUPTED',
        'The tool call was interrupted before it finished and was not run again; it may or may not have taken effect.',
        0,
      );
      continue;
    }
    if (def.approval === 'always' && call.status === 'requested') {
      needApproval.push(call);
      continue;
    }
    const started: ConversationEvent = {
      type: 'ToolCallStarted',
      data: { turnNo, toolCallId: call.id, name: call.name, arguments: call.arguments, kind: def.kind },
    };
    // A call that may not run twice is on record before it runs, so a crash leaves it
    // INTERRUPTED; an idempotent one is simply run again, so its start and its outcome are
    // staged and stored with the turn's next append (the next model call's, usually).
    if (!def.idempotent) await ctx.append([started]);
    const repositoryId = repositoryOf(c, def.name)?.repositoryId;
    const outcome = await withSpan('parley.tool_call', { 'parley.tool': def.name, 'parley.tool_kind': def.kind }, () =>
      deps.tools.execute(def, call.arguments, {
        conversationId: c.id,
        appId: c.snapshot.applicationCode,
        ...(repositoryId ? { repositoryId } : {}),
        toolCallId: call.id,
        signal,
        timeoutMs: deps.config.turn.toolCallTimeoutMs,
        maxOutputBytes: c.snapshot.limits.maxToolOutputBytes,
      }),
    );
    if (signal.aborted) return 'continue';
    const write: Write = def.idempotent ? async (events) => ctx.stage([started, ...events]) : appendNow(ctx);
    await record(ctx, call, outcome, write);
  }
  if (needApproval.length === 0) return 'continue';
  const turnNo = ctx.state.turn!.no;
  await ctx.append(
    needApproval.map((call) => ({
      type: 'ToolCallApprovalRequested' as const,
      data: { turnNo, toolCallId: call.id, name: call.name, arguments: call.arguments },
    })),
  );
  return 'wait';
}

const nextSequence = (c: ExistingConversation) => (c.transcript.at(-1)?.sequence ?? 0) + 1;

/** How a call's outcome is kept: appended now, or staged for the turn's next append. */
type Write = (events: ConversationEvent[]) => Promise<void>;

const appendNow =
  (ctx: TurnContext): Write =>
  async (events) =>
    void (await ctx.append(events));

/**
 * Keeps a call's outcome through `write`. A completed call of a triggerOnce repository's tool
 * removes that repository with it.
 */
async function record(ctx: TurnContext, call: TurnToolCall, outcome: ToolOutcome, write: Write): Promise<void> {
  if (!outcome.ok) return fail(ctx, call, outcome.error.code, outcome.error.message, outcome.durationMs, write);
  const c = ctx.state;
  const triggered = repositoryOf(c, call.name);
  await write([
    completed(c, call, outcome),
    ...(triggered?.options.triggerOnce
      ? [
          {
            type: 'ToolRepositoryRemoved' as const,
            data: { repositoryId: triggered.repositoryId, reason: 'triggered' as const, triggeredBy: call.id },
          },
        ]
      : []),
  ]);
}

async function fail(
  ctx: TurnContext,
  call: TurnToolCall,
  code: ToolErrorCode,
  message: string,
  durationMs: number,
  write: Write = appendNow(ctx),
): Promise<void> {
  const c = ctx.state;
  const event: ConversationEvent = {
    type: 'ToolCallFailed',
    data: {
      turnNo: c.turn!.no,
      sequence: nextSequence(c),
      toolCallId: call.id,
      name: call.name,
      code,
      message,
      durationMs,
    },
  };
  await write([event]);
}

/** AskUserQuestion: the model's structured questions become a QU message and the conversation waits. */
async function ask(ctx: TurnContext, deps: TurnDeps, call: TurnToolCall): Promise<boolean> {
  const questions = parseQuestions(call.arguments);
  if (typeof questions === 'string') {
    await fail(ctx, call, 'INVALID_ARGUMENTS', questions, 0);
    return false;
  }
  const c = ctx.state;
  const expiresAt = new Date(Date.now() + c.snapshot.limits.questionTimeoutMs).toISOString();
  const events: ConversationEvent[] = [
    {
      type: 'QuestionAsked',
      data: { turnNo: c.turn!.no, sequence: nextSequence(c), toolCallId: call.id, questions, expiresAt },
    },
  ];
  const appended = await ctx.append(events);
  // The question is recorded; an expiry timer Redis did not take is stored by the TurnDispatcher.
  await deps.scheduler
    .afterAppend(c.id, events, appended.revision)
    .catch((err: unknown) =>
      logger.warn(
        `expiry of question ${call.id} of ${c.id} not stored now (${(err as Error).message}); the turn dispatcher stores it`,
      ),
    );
  return true;
}

function parseQuestions(raw: string): Question[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw || '{}');
  } catch {
    return 'The arguments are not valid JSON; send {"questions":[{"key":"...","question":"...","options":["..."]}]}.';
  }
  const list = (parsed as { questions?: unknown })?.questions;
  if (!Array.isArray(list) || list.length === 0)
    return 'questions: expected a non-empty array of {key, question, options?}.';
  const problems: string[] = [];
  const questions = list.map((q: Record<string, unknown>, i) => {
    if (typeof q?.key !== 'string' || !q.key) problems.push(`questions[${i}].key: expected a non-empty string`);
    if (typeof q?.question !== 'string' || !q.question)
      problems.push(`questions[${i}].question: expected a non-empty string`);
    return {
      key: String(q?.key ?? ''),
      question: String(q?.question ?? ''),
      ...(Array.isArray(q?.options) ? { options: q.options.map(String) } : {}),
      ...(q?.required === false ? { required: false } : {}),
    };
  });
  return problems.length ? problems.join('; ') : questions;
}

/** Progressive disclosure: the skill's tools join the conversation for the following calls. */
async function disclose(ctx: TurnContext, call: TurnToolCall, def: ToolDefinition): Promise<void> {
  const c = ctx.state;
  const skill = c.snapshot.disclosableSkills.find((s) => s.code === def.ref);
  if (!skill) return fail(ctx, call, 'NOT_ALLOWED', `Skill '${def.ref}' cannot be disclosed.`, 0);
  const already = new Set(availableTools(c).map((t) => t.name));
  const tools = skill.tools.filter((t) => !already.has(t.name));
  const names = skill.tools.map((t) => t.name).join(', ') || 'none';
  const output = [`Skill ${skill.code} is now enabled. Its tools are available: ${names}.`, skill.prompt ?? '']
    .filter(Boolean)
    .join('\n');
  await ctx.append([
    { type: 'SkillDisclosed', data: { turnNo: c.turn!.no, skillCode: skill.code, tools } },
    completed(c, call, { output, truncated: false, durationMs: 0 }),
  ]);
}

/** The ToolCallCompleted of `call`, its result the conversation's next message. */
function completed(
  c: ExistingConversation,
  call: TurnToolCall,
  result: { output: string; truncated: boolean; durationMs: number; returnDirect?: boolean; skipResponse?: boolean },
): ConversationEvent {
  return {
    type: 'ToolCallCompleted',
    data: {
      turnNo: c.turn!.no,
      sequence: nextSequence(c),
      toolCallId: call.id,
      name: call.name,
      output: result.output,
      truncated: result.truncated,
      durationMs: result.durationMs,
      ...(result.returnDirect ? { returnDirect: true } : {}),
      ...(result.skipResponse ? { skipResponse: true } : {}),
    },
  };
}

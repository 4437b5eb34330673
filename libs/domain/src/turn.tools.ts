import type { ToolDefinition, ToolErrorCode, ToolOutcome } from '@parley/core';
import type { ConversationEvent, Question, ToolCallFailed, ToolCallRef } from './conversation.events';
import { availableTools, type TurnToolCall } from './conversation.state';
import { nextSequence, toolCallsPerReply, type RunningTurn } from './turn.rules';
import { repositoryOf } from './tool-repositories';

/** The events of the tool calls of a turn: what a call's outcome, refusal, question or disclosure records. */

export const toolFailed = (
  c: RunningTurn,
  call: TurnToolCall,
  code: ToolErrorCode,
  message: string,
  durationMs = 0,
): ToolCallFailed => ({
  type: 'ToolCallFailed',
  data: {
    turnNo: c.turn.no,
    sequence: nextSequence(c),
    toolCallId: call.id,
    name: call.name,
    code,
    message,
    durationMs,
  },
});

type Completed = Extract<ToolOutcome, { ok: true }>;

function toolCompleted(c: RunningTurn, call: TurnToolCall, result: Completed): ConversationEvent {
  return {
    type: 'ToolCallCompleted',
    data: {
      turnNo: c.turn.no,
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

/** A call's outcome; a completed call of a triggerOnce repository's tool removes that repository with it. */
export function toolOutcome(c: RunningTurn, call: TurnToolCall, outcome: ToolOutcome): ConversationEvent[] {
  if (!outcome.ok) return [toolFailed(c, call, outcome.error.code, outcome.error.message, outcome.durationMs)];
  const triggered = repositoryOf(c, call.name);
  return [
    toolCompleted(c, call, outcome),
    ...(triggered?.options.triggerOnce
      ? [
          {
            type: 'ToolRepositoryRemoved' as const,
            data: { repositoryId: triggered.repositoryId, reason: 'triggered' as const, triggeredBy: call.id },
          },
        ]
      : []),
  ];
}

/** AskUserQuestion: the model's structured questions become a QU message and the conversation waits. */
export function askQuestion(c: RunningTurn, call: TurnToolCall, now: number): ConversationEvent {
  const questions = parseQuestions(call.arguments);
  if (typeof questions === 'string') return toolFailed(c, call, 'INVALID_ARGUMENTS', questions);
  const expiresAt = new Date(now + c.snapshot.limits.questionTimeoutMs).toISOString();
  return {
    type: 'QuestionAsked',
    data: { turnNo: c.turn.no, sequence: nextSequence(c), toolCallId: call.id, questions, expiresAt },
  };
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
export function discloseSkill(c: RunningTurn, call: TurnToolCall, tool: ToolDefinition): ConversationEvent[] {
  const skill = c.snapshot.disclosableSkills.find((s) => s.code === tool.ref);
  if (!skill) return [toolFailed(c, call, 'NOT_ALLOWED', `Skill '${tool.ref}' cannot be disclosed.`)];
  const already = new Set(availableTools(c).map((t) => t.name));
  const tools = skill.tools.filter((t) => !already.has(t.name));
  const names = skill.tools.map((t) => t.name).join(', ') || 'none';
  const output = [`Skill ${skill.code} is now enabled. Its tools are available: ${names}.`, skill.prompt ?? '']
    .filter(Boolean)
    .join('\n');
  return [
    { type: 'SkillDisclosed', data: { turnNo: c.turn.no, skillCode: skill.code, tools } },
    toolCompleted(c, call, {
      ok: true,
      output,
      truncated: false,
      durationMs: 0,
      returnDirect: false,
      skipResponse: false,
    }),
  ];
}

export const approvalsRequested = (c: RunningTurn, calls: TurnToolCall[], now: number): ConversationEvent[] => {
  const timeoutMs = c.snapshot.limits.approvalTimeoutMs;
  const expiresAt = timeoutMs === undefined ? {} : { expiresAt: new Date(now + timeoutMs).toISOString() };
  return calls.map((call) => ({
    type: 'ToolCallApprovalRequested' as const,
    data: { turnNo: c.turn.no, toolCallId: call.id, name: call.name, arguments: call.arguments, ...expiresAt },
  }));
};

/** A call that needs approval, approved by the conversation's auto_confirm instead of a human. */
export const autoApproved = (call: TurnToolCall): ConversationEvent => ({
  type: 'ToolCallApproved',
  data: { toolCallId: call.id, by: 'auto' },
});

export const toolStarted = (c: RunningTurn, call: TurnToolCall, tool: ToolDefinition): ConversationEvent => ({
  type: 'ToolCallStarted',
  data: { turnNo: c.turn.no, toolCallId: call.id, name: call.name, arguments: call.arguments, kind: tool.kind },
});

/**
 * The calls of a model reply with ids unique in the conversation: a model may repeat an id
 * (`call_1` in every reply), and statuses, approvals and question timers go by id. A repeated
 * id gets a new one; the model's stays beside it for the provider round-trip.
 */
export function withConversationIds(c: RunningTurn, callNo: number, calls: readonly ToolCallRef[]): ToolCallRef[] {
  const taken = new Set(c.transcript.flatMap((m) => (m.toolCalls ?? []).map((t) => t.id)));
  return calls.map((call, i) => {
    let id = call.id;
    for (let n = 0; taken.has(id); n++) id = `${call.id}~${c.turn.no}.${callNo}.${i}${n ? `.${n}` : ''}`;
    taken.add(id);
    return id === call.id ? call : { ...call, id, providerId: call.id };
  });
}

/**
 * The calls of one reply past the per-reply cap, refused as data: each gets a result saying so
 * (the model reads it and may ask again for fewer), and the turn goes on with the others.
 * `sequence` is where the first refusal goes in the transcript.
 */
export function refusedPastCap(c: RunningTurn, calls: readonly ToolCallRef[], sequence: number): ToolCallFailed[] {
  const cap = toolCallsPerReply(c);
  return calls.slice(cap).map((call, i) => ({
    type: 'ToolCallFailed',
    data: {
      turnNo: c.turn.no,
      sequence: sequence + i,
      toolCallId: call.id,
      name: call.name,
      code: 'NOT_ALLOWED',
      message: `Not run: the reply asked for ${calls.length} tool calls and at most ${cap} run per reply. Ask for the rest in a later reply.`,
      durationMs: 0,
      refused: true,
    },
  }));
}

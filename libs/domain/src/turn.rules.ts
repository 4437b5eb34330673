import { DEFAULT_COMPLETION_RESERVE, type ConversationSnapshot, type TurnFailureCode } from '@parley/core';
import type { ConversationCompleted, ConversationFailed } from './conversation.events';
import type { ExistingConversation, TurnProgress } from './conversation.state';

/** A conversation in the middle of a turn: the state every turn rule reads. */
export type RunningTurn = ExistingConversation & { turn: TurnProgress };

/** After this many tool calls failed in a row, the turn fails (TOOL_ERRORS). */
export const MAX_CONSECUTIVE_TOOL_FAILURES = 2;

/** Tool calls of one reply that run when the snapshot names no cap (snapshots recorded before it had one). */
export const DEFAULT_MAX_TOOL_CALLS_PER_REPLY = 32;

export const toolCallsPerReply = (c: RunningTurn): number =>
  c.snapshot.limits.maxToolCallsPerReply ?? DEFAULT_MAX_TOOL_CALLS_PER_REPLY;

/** When the turn's time budget runs out, in epoch milliseconds. */
export const turnDeadline = (c: RunningTurn): number => Date.parse(c.turn.startedAt) + c.snapshot.limits.turnTimeoutMs;

export const turnFailed = (
  c: RunningTurn,
  code: TurnFailureCode,
  message: string,
  details?: Record<string, unknown>,
): ConversationFailed => ({
  type: 'ConversationFailed',
  data: { turnNo: c.turn.no, code, message, ...(details ? { details } : {}) },
});

/** Whether the turn is out of time at `now`: its deadline's own millisecond leaves no time for a step. */
export const isOverTime = (c: RunningTurn, now: number): boolean => now >= turnDeadline(c);

export const overTime = (c: RunningTurn): ConversationFailed =>
  turnFailed(c, 'LLM_LIMIT_EXCEEDED', `The turn ran past its time budget of ${c.snapshot.limits.turnTimeoutMs} ms.`);

/**
 * The limits every step of a turn answers to: its time budget, the two-failures rule, and a tool
 * output over its limit where the snapshot says that ends the turn (toolOutputOverflow `fail`).
 */
export function stepBreach(c: RunningTurn, now: number): ConversationFailed | null {
  if (isOverTime(c, now)) return overTime(c);
  if (c.turn.consecutiveToolFailures >= MAX_CONSECUTIVE_TOOL_FAILURES)
    return turnFailed(c, 'TOOL_ERRORS', 'Two tool calls in a row failed.');
  const { limits } = c.snapshot;
  if (c.turn.overflowedTool !== undefined && limits.toolOutputOverflow === 'fail')
    return turnFailed(
      c,
      'LLM_LIMIT_EXCEEDED',
      `The output of tool '${c.turn.overflowedTool}' is over the limit of ${limits.maxToolOutputBytes} bytes.`,
    );
  return null;
}

/** The limits a model call answers to before it is made: tool rounds and the token budgets. */
export function modelCallBreach(c: RunningTurn): ConversationFailed | null {
  const { limits } = c.snapshot;
  const used = c.turn.usage;
  if (c.turn.modelCalls > limits.maxToolRounds)
    return turnFailed(
      c,
      'LLM_LIMIT_EXCEEDED',
      `The model asked for tools more than ${limits.maxToolRounds} rounds in a row.`,
    );
  if (limits.maxCompletionTokens !== null && used.outputTokens >= limits.maxCompletionTokens)
    return turnFailed(
      c,
      'LLM_LIMIT_EXCEEDED',
      `The turn used its completion token budget (${used.outputTokens} of ${limits.maxCompletionTokens}).`,
    );
  const total = used.inputTokens + used.outputTokens;
  if (limits.maxTotalTokens !== null && total >= limits.maxTotalTokens)
    return turnFailed(
      c,
      'LLM_LIMIT_EXCEEDED',
      `The turn used its total token budget (${total} of ${limits.maxTotalTokens}).`,
    );
  return null;
}

/**
 * The prompt budget of the turn's model calls: the configured MAX_PROMPT_TOKENS (limits), else
 * the model's context window less what the reply may take (the call's max tokens, else
 * DEFAULT_COMPLETION_RESERVE), else none.
 */
export function promptBudget(c: RunningTurn): number | null {
  if (c.snapshot.limits.maxPromptTokens !== null) return c.snapshot.limits.maxPromptTokens;
  const window = c.snapshot.model.contextWindow;
  if (window === undefined) return null;
  return Math.max(0, window - (completionCap(c) ?? DEFAULT_COMPLETION_RESERVE));
}

/** The prompt of the next model call against the turn's prompt budget (promptBudget). */
export function promptBreach(c: RunningTurn, promptTokens: number): ConversationFailed | null {
  const budget = promptBudget(c);
  if (budget === null || promptTokens <= budget) return null;
  return turnFailed(c, 'LLM_LIMIT_EXCEEDED', `The prompt has ${promptTokens} tokens, over the budget of ${budget}.`);
}

/** The completion cap of the next model call: the configured max tokens, within what the turn's completion budget has left. */
export function completionCap(c: RunningTurn): number | undefined {
  const { maxTokens } = c.snapshot.options;
  const budget = c.snapshot.limits.maxCompletionTokens;
  if (budget === null) return maxTokens;
  const left = Math.max(1, budget - c.turn.usage.outputTokens);
  return maxTokens === undefined ? left : Math.min(maxTokens, left);
}

/** What tokens cost at the model's prices, as recorded per model call and estimated per turn. */
export const costOf = (
  model: ConversationSnapshot['model'],
  usage: { inputTokens: number; outputTokens: number },
): number => usage.inputTokens * model.inputTokenPrice + usage.outputTokens * model.outputTokenPrice;

/** The turn's reply: a returnDirect tool's output (null after skipResponse), else the model's last reply. */
export const replyOf = (turn: TurnProgress): string | null =>
  turn.endedByTool ? turn.endedByTool.reply : turn.lastReply;

/**
 * The turn is over when a tool that returns directly (or skips the response) ended its round,
 * or when the model's last reply of this turn asked for no tool: the ConversationCompleted
 * that says so, or null while the turn goes on.
 */
export function completion(c: RunningTurn): ConversationCompleted | null {
  const { turn } = c;
  const last = c.transcript.at(-1);
  const answered = last?.role === 'AS' && last.turnNo === turn.no && !last.toolCalls?.length;
  if (!turn.endedByTool && !answered) return null;
  return {
    type: 'ConversationCompleted',
    data: {
      turnNo: turn.no,
      finishReason: turn.lastFinishReason ?? 'ST',
      reply: replyOf(turn),
      responseModel: turn.responseModel,
    },
  };
}

/** Where each message of the transcript goes: one more than the last. */
export const nextSequence = (c: ExistingConversation): number => (c.transcript.at(-1)?.sequence ?? 0) + 1;

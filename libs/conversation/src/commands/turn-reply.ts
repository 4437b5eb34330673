import { roundCost } from '@parley/core';
import type { CommandReply, TurnReply } from '../api/replies';
import { costOf, replyOf } from '@parley/domain';
import { type ConversationState, pendingApprovals } from '@parley/domain';

export function commandReplyOf(conversationId: string, state: ConversationState, position: string): CommandReply {
  return { conversationId, status: state.status === 'none' ? 'NS' : state.status, position };
}

/** The reply to a turn-running command: the turn's outcome so far. */
export function turnReplyOf(
  conversationId: string,
  state: ConversationState,
  position: string,
  done: boolean,
): TurnReply {
  const base = commandReplyOf(conversationId, state, position);
  if (state.status === 'none')
    return { ...base, done, reply: null, usage: { inputTokens: 0, outputTokens: 0, estimatedCost: 0 } };
  const turn = state.turn;
  const used = turn?.usage ?? { inputTokens: 0, outputTokens: 0 };
  const usage = { ...used, estimatedCost: roundCost(costOf(state.snapshot.model, used)) };
  const reply = state.status === 'CO' && turn ? replyOf(turn) : null;
  // The answer that ended the turn, when retrieval gave its prompt a context block.
  const answer = reply !== null ? state.transcript.at(-1) : undefined;
  const ours = answer?.role === 'AS' && answer.turnNo === turn?.no;
  const ragSources = ours ? (answer.ragSources ?? []) : [];
  // The answer parsed against the action's output schema (structured output).
  const output = ours ? answer.output : undefined;
  const approvals = pendingApprovals(state).map(({ id, name, arguments: args }) => ({
    toolCallId: id,
    name,
    arguments: args,
  }));
  return {
    ...base,
    done,
    reply,
    usage,
    ...(state.pendingQuestion
      ? { pendingQuestion: { ...state.pendingQuestion, questions: [...state.pendingQuestion.questions] } }
      : {}),
    ...(approvals.length ? { pendingApprovals: approvals } : {}),
    ...(state.status === 'CO' ? { finishReason: state.finishReason } : {}),
    ...(ragSources.length ? { ragSources: ragSources.map((s) => ({ ...s })) } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(state.status === 'FA' && state.error ? { error: { ...state.error } } : {}),
  };
}

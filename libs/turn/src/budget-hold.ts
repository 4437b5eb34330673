import { Logger } from '@nestjs/common';
import { refusalDetails, worstCaseCost } from '@parley/catalog';
import type { ModelCallPlan } from '@parley/domain';
import type { LlmRequest } from '@parley/llm';
import { countPromptTokens } from '@parley/prompt';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

const logger = new Logger('SpendBudgets');

/** A hold outlives its call's deadline by this: a crashed run's hold then lapses on its own. */
const HOLD_GRACE_MS = 60_000;

/** What a model call holds against its budgets, settled or released when the call ends. */
export interface BudgetHold {
  settle(cost: number): Promise<void>;
  release(note: string): Promise<void>;
}

export type HoldOutcome =
  { kind: 'free'; request: LlmRequest } | { kind: 'held'; request: LlmRequest; hold: BudgetHold } | { kind: 'refused' };

/**
 * Reserves the call's worst case against the budgets on its subject, agent and action (docs/budgets.md):
 * the prompt estimate and its `max_tokens` (BUDGET_MAX_TOKENS when it sets none; the call is then
 * sent with it) at the model's prices. A call that does not fit fails the turn with BUDGET_EXCEEDED.
 */
export async function holdBudget(
  ctx: TurnContext,
  deps: TurnDeps,
  plan: ModelCallPlan,
  request: LlmRequest,
  promptTokens?: number,
): Promise<HoldOutcome> {
  const c = ctx.state;
  const spender = { subject: c.owner, agentCode: c.agentCode, actionCode: c.actionCode };
  const budgets = deps.budgets ? await deps.budgets.applying(spender) : [];
  if (!deps.budgets || budgets.length === 0) return { kind: 'free', request };
  const ledger = deps.budgets;
  const maxTokens = request.options.maxTokens ?? deps.config.turn.budgetMaxTokens;
  const bounded = { ...request, options: { ...request.options, maxTokens } };
  const { model } = c.snapshot;
  const prompt = promptTokens ?? countPromptTokens(request.messages, request.tools, request.model);
  const reservation = await ledger.reserve(budgets, {
    ...spender,
    conversationId: c.id,
    turnNo: c.turn!.no,
    callNo: plan.callNo,
    model: model.name,
    amount: worstCaseCost(model, prompt, maxTokens),
    expiresAt: new Date(plan.deadline + HOLD_GRACE_MS),
  });
  if (!reservation.ok) {
    const { refusal } = reservation;
    deps.metrics?.recordBudgetRefusal({ scope: refusal.scope, period: refusal.period });
    const { message, details } = refusalDetails(refusal);
    await ctx.append(ctx.decide({ type: 'AbandonTurn', data: { code: 'BUDGET_EXCEEDED', message, details } }));
    return { kind: 'refused' };
  }
  const id = reservation.id;
  const warn = (what: string) => (err: unknown) =>
    logger.warn(`reservation ${id} of ${c.id} not ${what} (it lapses at its expiry): ${(err as Error).message}`);
  return {
    kind: 'held',
    request: bounded,
    hold: {
      settle: (cost) => ledger.settle(id, cost).catch(warn('settled')),
      release: (note) => ledger.release(id, note).catch(warn('released')),
    },
  };
}

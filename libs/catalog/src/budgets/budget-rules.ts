/**
 * The pure half of spend budgets (docs/budgets.md): which period a moment falls in, and the worst
 * case a model call is reserved at before it is made.
 */
export type BudgetScope = 'subject' | 'agent' | 'action';
export type BudgetPeriod = 'day' | 'month';

export interface Budget {
  code: string;
  scope: BudgetScope;
  target: string;
  period: BudgetPeriod;
  cap: number;
}

/** Who a model call is made for: each budget on one of these applies to it. */
export interface Spender {
  subject: string;
  agentCode: string;
  actionCode: string;
}

/** The first day (UTC, `YYYY-MM-DD`) of the period `at` falls in. */
export function periodStart(period: BudgetPeriod, at: Date): string {
  const day = at.toISOString().slice(0, 10);
  return period === 'day' ? day : `${day.slice(0, 7)}-01`;
}

/**
 * The prompt is an estimate (a tokenizer's count, where the provider counts its own way): it is
 * reserved with this headroom, so a call's actual cost stays under what it reserved.
 */
const PROMPT_HEADROOM_PERCENT = 110;
const PROMPT_EXTRA_TOKENS = 32;

/** The most a call may cost: its prompt estimate with headroom, and every completion token it may produce. */
export function worstCaseCost(
  prices: { inputTokenPrice: number; outputTokenPrice: number },
  promptTokens: number,
  maxTokens: number,
): number {
  const prompt = Math.ceil((promptTokens * PROMPT_HEADROOM_PERCENT) / 100) + PROMPT_EXTRA_TOKENS;
  return prompt * prices.inputTokenPrice + maxTokens * prices.outputTokenPrice;
}

/** What a refusal says, and carries as BUDGET_EXCEEDED's `details`. */
export interface BudgetRefusal {
  budget: string;
  scope: BudgetScope;
  target: string;
  period: BudgetPeriod;
  periodStart: string;
  cap: number;
  spent: number;
  reserved: number;
  /** What this call would have reserved. */
  amount: number;
}

export function refusalMessage(r: BudgetRefusal): string {
  return (
    `The model call would pass budget '${r.budget}' (${r.scope} ${r.target}, per ${r.period} from ${r.periodStart}): ` +
    `cap ${r.cap}, spent ${r.spent}, reserved ${r.reserved}, this call up to ${r.amount}.`
  );
}

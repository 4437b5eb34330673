import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { Roles } from '@parley/auth';
import { parseOrThrow } from '@parley/platform';
import { z } from 'zod';
import { SpendBudgets, type BudgetStanding, type LedgerEntry } from './spend-budgets';

export const budgetParams = z.strictObject({ code: z.string().min(1).max(32) });

/** A page of the ledger: newest first, `before` a reservation id to page on. */
export const budgetLedgerQuery = budgetParams.extend({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z.uuid().optional(),
});

/**
 * Where a budget stands and its ledger, for admins and auditors (docs/budgets.md). Budgets are
 * set through the catalog (`/api/v1/catalog/budgets`, or `budgets:` in a bundle).
 */
@Controller('api/v1/budgets')
@Roles('admin', 'auditor')
export class BudgetsController {
  constructor(@Inject(SpendBudgets) private readonly budgets: SpendBudgets) {}

  /** The current UTC period: cap, spent, and what running calls hold. */
  @Get(':code')
  standing(@Param('code') code: string): Promise<BudgetStanding> {
    return this.budgets.standing(parseOrThrow(budgetParams, { code }).code);
  }

  /** Reservations and settlements, newest first. */
  @Get(':code/ledger')
  ledger(@Param('code') code: string, @Query() query: Record<string, unknown>): Promise<LedgerEntry[]> {
    const { limit, before } = parseOrThrow(budgetLedgerQuery, { ...query, code });
    return this.budgets.ledger(code, { limit, ...(before ? { before } : {}) });
  }
}

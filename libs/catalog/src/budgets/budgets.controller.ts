import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { Roles } from '@parley/auth';
import { DomainError } from '@parley/core';
import { SpendBudgets, type BudgetStanding, type LedgerEntry } from './spend-budgets';

const LEDGER_PAGE_MAX = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    return this.budgets.standing(code);
  }

  /** Reservations and settlements, newest first; `?limit=` (default 100, at most 500) and `?before=<reservationId>`. */
  @Get(':code/ledger')
  ledger(
    @Param('code') code: string,
    @Query('limit') limit?: string,
    @Query('before') before?: string,
  ): Promise<LedgerEntry[]> {
    const n = limit === undefined ? 100 : Number(limit);
    const problems = [
      ...(Number.isInteger(n) && n >= 1 && n <= LEDGER_PAGE_MAX
        ? []
        : [{ path: 'limit', message: `expected an integer from 1 to ${LEDGER_PAGE_MAX}` }]),
      ...(before === undefined || UUID.test(before) ? [] : [{ path: 'before', message: 'expected a reservation id' }]),
    ];
    if (problems.length > 0) throw DomainError.validation(problems);
    return this.budgets.ledger(code, { limit: n, ...(before ? { before } : {}) });
  }
}

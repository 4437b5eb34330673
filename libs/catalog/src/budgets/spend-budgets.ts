import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { DomainError } from '@parley/core';
import { LRUCache } from 'lru-cache';
import { PG_POOL } from '@parley/platform';
import type { ClientBase, Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { periodStart, refusalMessage, type Budget, type BudgetRefusal, type Spender } from './budget-rules';

/** One model call to reserve for. */
export interface CallToReserve extends Spender {
  conversationId: string;
  turnNo: number;
  callNo: number;
  model: string;
  /** The worst case (worstCaseCost). */
  amount: number;
  /** The hold lapses then (the call's deadline and a grace): a crashed run's reservation frees itself. */
  expiresAt: Date;
}

export type Reservation = { ok: true; id: string } | { ok: false; refusal: BudgetRefusal };

/** BUDGET_EXCEEDED (402) with the refusal as `details`. */
export const budgetExceeded = (refusal: BudgetRefusal): DomainError => {
  const { message, details } = refusalDetails(refusal);
  return new DomainError('BUDGET_EXCEEDED', message, details);
};

/** The refusal as a sentence and as BUDGET_EXCEEDED's `details`. */
export const refusalDetails = (refusal: BudgetRefusal) => ({
  message: refusalMessage(refusal),
  details: { ...refusal } as Record<string, unknown>,
});

/** Money as PostgreSQL numeric text: JavaScript's shortest exact form of the double. */
const money = (n: number): string => String(n);

export interface BudgetStanding extends Budget {
  periodStart: string;
  spent: number;
  reserved: number;
}

/** One reservation of a model call against a budget, as the ledger route shows it. */
export interface LedgerEntry {
  reservationId: string;
  periodStart: string;
  conversationId: string;
  turnNo: number;
  callNo: number;
  subject: string;
  agentCode: string;
  actionCode: string;
  model: string;
  /** The worst case held. */
  reserved: number;
  /** What the call cost; null while open or when released. */
  actual: number | null;
  status: 'open' | 'settled' | 'released' | 'expired';
  note: string | null;
  reservedAt: string;
  expiresAt: string;
  settledAt: string | null;
}

interface LedgerRow {
  id: string;
  period_start: string;
  conversation_id: string;
  turn_no: number;
  call_no: number;
  subject: string;
  agent_code: string;
  action_code: string;
  model: string;
  amount: string;
  actual: string | null;
  status: LedgerEntry['status'];
  note: string | null;
  reserved_at: Date;
  expires_at: Date;
  settled_at: Date | null;
}

const BUDGET_COLUMNS = 'code, scope, target, period, cap';

/**
 * Spend budgets in PostgreSQL (docs/budgets.md). A model call reserves its worst case against
 * every budget on its subject, agent and action, in one transaction that locks the budgets'
 * period rows (always in the same order) and holds the amount only if, for each, spent plus what
 * is held plus the amount stays within the cap: however many turns race, the caps hold. The call
 * then settles to its actual cost (spent grows by it, the hold ends) or is released. Holds lapse
 * at their expiry, and a conversation's next reservation releases what a crashed run left open.
 */
@Injectable()
export class SpendBudgets {
  /**
   * The budgets that apply to each spender, for BUDGETS_CACHE_MS: a model call then needs no
   * statement to learn that none apply. Caps and spend are read in `reserve` itself, so a cap
   * changed is seen at once; a budget created or deleted here is (`forget`), elsewhere within it.
   */
  private readonly applyingTo: LRUCache<string, Budget[], Spender> | null;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Optional() @Inject(CONFIG) config: Config | null = null,
  ) {
    const ttl = config?.turn.budgetsCacheMs ?? 0;
    this.applyingTo =
      ttl > 0
        ? new LRUCache({ max: 10_000, ttl, fetchMethod: (_key, _stale, { context }) => this.read(context) })
        : null;
  }

  /** The budgets on this subject, agent or action. */
  async applying(spender: Spender): Promise<Budget[]> {
    if (!this.applyingTo) return this.read(spender);
    const key = `${spender.subject}\u0000${spender.agentCode}\u0000${spender.actionCode}`;
    return (await this.applyingTo.fetch(key, { context: spender }))!;
  }

  /** Forgets which budgets apply to whom: the catalog's budgets have changed in this process. */
  forget(): void {
    this.applyingTo?.clear();
  }

  private async read(spender: Spender): Promise<Budget[]> {
    const { rows } = await this.pool.query<Budget>(
      `select ${BUDGET_COLUMNS} from cat_budgets
        where (target = $1 and scope = 'subject') or (target = $2 and scope = 'agent') or (target = $3 and scope = 'action')
        order by code`,
      [spender.subject, spender.agentCode, spender.actionCode],
    );
    return rows.map((r) => ({ ...r, cap: Number(r.cap) }));
  }

  /**
   * Holds `call.amount` against `budgets` (those that apply: `applying`), or says which budget it
   * would pass. The conversation's open reservations are released first: only one run of a
   * conversation calls the model at a time, so they belong to a run that died.
   */
  async reserve(budgets: readonly Budget[], call: CallToReserve, now = new Date()): Promise<Reservation> {
    const held = budgets.map((b) => ({ budget: b.code, periodStart: periodStart(b.period, now) }));
    return this.transaction(async (m) => {
      await m.query(
        `insert into budget_periods (budget, period_start)
           select * from unnest($1::varchar[], $2::date[]) on conflict do nothing`,
        [held.map((h) => h.budget), held.map((h) => h.periodStart)],
      );
      await m.query(
        `select 1 from budget_periods where (budget, period_start) in (select * from unnest($1::varchar[], $2::date[]))
          order by budget, period_start for update`,
        [held.map((h) => h.budget), held.map((h) => h.periodStart)],
      );
      await this.releaseOpen(m, call.conversationId, 'released: its run ended without settling');
      const { rows: standing } = await m.query<{
        budget: string;
        period_start: string;
        spent: string;
        reserved: string;
        cap: string;
        fits: boolean;
      }>(
        `with wanted (budget, period_start) as (select * from unnest($1::varchar[], $2::date[]))
         select w.budget, w.period_start::text as period_start, p.spent::text as spent,
                coalesce(h.reserved, 0)::text as reserved, b.cap::numeric::text as cap,
                p.spent + coalesce(h.reserved, 0) + $3::numeric <= b.cap::numeric as fits
           from wanted w
           join budget_periods p on p.budget = w.budget and p.period_start = w.period_start
           join cat_budgets b on b.code = w.budget
           left join (select budget, period_start, sum(amount) as reserved from budget_holds
                       where open and expires_at > now()
                         and (budget, period_start) in (select * from wanted)
                       group by budget, period_start) h
             on h.budget = w.budget and h.period_start = w.period_start
          order by w.budget`,
        [held.map((h) => h.budget), held.map((h) => h.periodStart), money(call.amount)],
      );
      const over = standing.find((s) => !s.fits);
      if (over) {
        const b = budgets.find((x) => x.code === over.budget)!;
        const refusal: BudgetRefusal = {
          budget: b.code,
          scope: b.scope,
          target: b.target,
          period: b.period,
          periodStart: over.period_start,
          cap: Number(over.cap),
          spent: Number(over.spent),
          reserved: Number(over.reserved),
          amount: call.amount,
        };
        return { ok: false, refusal };
      }
      // A budget deleted since `applying` read it holds nothing.
      const holding = held.filter((h) => standing.some((s) => s.budget === h.budget));
      const id = uuidv7();
      await m.query(
        `insert into budget_reservations (id, conversation_id, turn_no, call_no, subject, agent_code, action_code,
           model, amount, status, reserved_at, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, 'open', $10, $11)`,
        [
          id,
          call.conversationId,
          call.turnNo,
          call.callNo,
          call.subject,
          call.agentCode,
          call.actionCode,
          call.model,
          money(call.amount),
          now,
          call.expiresAt,
        ],
      );
      await m.query(
        `insert into budget_holds (budget, period_start, reservation_id, amount, expires_at)
           select b, p::date, $3, $4::numeric, $5 from unnest($1::varchar[], $2::text[]) as t (b, p)`,
        [holding.map((h) => h.budget), holding.map((h) => h.periodStart), id, money(call.amount), call.expiresAt],
      );
      return { ok: true, id };
    });
  }

  /**
   * The call cost `actual`: it is added to the spend of every period the reservation held (also
   * when its hold has lapsed: the money was spent), and the hold ends.
   */
  async settle(reservationId: string, actual: number): Promise<void> {
    await this.transaction(async (m) => {
      const { rowCount: holds } = await m.query(
        `select p.budget, p.period_start::text as period_start from budget_periods p
           join budget_holds h on h.budget = p.budget and h.period_start = p.period_start
          where h.reservation_id = $1 order by p.budget, p.period_start for update of p`,
        [reservationId],
      );
      const { rowCount: settled } = await m.query(
        `update budget_reservations set status = 'settled', actual = $2::numeric, settled_at = now(), note = null
          where id = $1 and actual is null returning id`,
        [reservationId, money(actual)],
      );
      if (!settled || !holds) return;
      await m.query(
        `update budget_periods p set spent = p.spent + $2::numeric
           from budget_holds h
          where h.reservation_id = $1 and p.budget = h.budget and p.period_start = h.period_start`,
        [reservationId, money(actual)],
      );
      await m.query('update budget_holds set open = false where reservation_id = $1', [reservationId]);
    });
  }

  /** The call was not made or failed with nothing to pay: the hold ends, nothing is spent. */
  async release(reservationId: string, note: string): Promise<void> {
    await this.transaction(async (m) => {
      const { rowCount: released } = await m.query(
        `update budget_reservations set status = 'released', settled_at = now(), note = $2
          where id = $1 and status = 'open'`,
        [reservationId, note.slice(0, 200)],
      );
      if (released) await m.query('update budget_holds set open = false where reservation_id = $1', [reservationId]);
    });
  }

  /** Releases what a conversation holds (its turn was recovered, or ended while a call was open). */
  async releaseConversation(conversationId: string, note: string): Promise<number> {
    return this.transaction((m) => this.releaseOpen(m, conversationId, note));
  }

  /** A budget's current period: cap, spent and what is held now; NOT_FOUND for an unknown budget. */
  async standing(code: string, now = new Date()): Promise<BudgetStanding> {
    const { rows } = await this.pool.query<Budget>(`select ${BUDGET_COLUMNS} from cat_budgets where code = $1`, [code]);
    if (rows.length === 0) throw DomainError.notFound('Budget', code);
    const budget = rows[0];
    const start = periodStart(budget.period, now);
    const { rows: sums } = await this.pool.query<{ spent: string | null; reserved: string | null }>(
      `select (select spent from budget_periods where budget = $1 and period_start = $2)::text as spent,
              (select sum(amount) from budget_holds where budget = $1 and period_start = $2
                 and open and expires_at > now())::text as reserved`,
      [code, start],
    );
    return {
      ...budget,
      periodStart: start,
      spent: Number(sums[0].spent ?? 0),
      reserved: Number(sums[0].reserved ?? 0),
    };
  }

  /**
   * The ledger of a budget, newest first: every reservation held against it, with what it settled
   * to. A hold still open past its expiry reads `expired`. Pages with `before` (a reservation id).
   */
  async ledger(code: string, page: { limit: number; before?: string }): Promise<LedgerEntry[]> {
    const { rows: known } = await this.pool.query('select 1 from cat_budgets where code = $1', [code]);
    const { rows } = await this.pool.query<LedgerRow>(
      `select r.id, h.period_start::text as period_start, r.conversation_id, r.turn_no, r.call_no, r.subject,
              r.agent_code, r.action_code, r.model, r.amount::text as amount, r.actual::text as actual,
              case when r.status = 'open' and r.expires_at <= now() then 'expired' else r.status end as status,
              r.note, r.reserved_at, r.expires_at, r.settled_at
         from budget_holds h join budget_reservations r on r.id = h.reservation_id
        where h.budget = $1 and ($2::uuid is null or r.id < $2::uuid)
        order by r.id desc limit $3`,
      [code, page.before ?? null, page.limit],
    );
    if (known.length === 0 && rows.length === 0) throw DomainError.notFound('Budget', code);
    return rows.map((r) => ({
      reservationId: r.id,
      periodStart: r.period_start,
      conversationId: r.conversation_id,
      turnNo: r.turn_no,
      callNo: r.call_no,
      subject: r.subject,
      agentCode: r.agent_code,
      actionCode: r.action_code,
      model: r.model,
      reserved: Number(r.amount),
      actual: r.actual === null ? null : Number(r.actual),
      status: r.status,
      note: r.note,
      reservedAt: r.reserved_at.toISOString(),
      expiresAt: r.expires_at.toISOString(),
      settledAt: r.settled_at?.toISOString() ?? null,
    }));
  }

  private async releaseOpen(m: ClientBase, conversationId: string, note: string): Promise<number> {
    const { rows: released } = await m.query<{ id: string }>(
      `update budget_reservations set status = 'released', settled_at = now(), note = $2
        where conversation_id = $1 and status = 'open' returning id`,
      [conversationId, note],
    );
    if (released.length === 0) return 0;
    await m.query('update budget_holds set open = false where reservation_id = any($1::uuid[])', [
      released.map((r) => r.id),
    ]);
    return released.length;
  }

  private async transaction<T>(work: (tx: ClientBase) => Promise<T>): Promise<T> {
    const tx = await this.pool.connect();
    try {
      await tx.query('begin');
      const result = await work(tx);
      await tx.query('commit');
      tx.release();
      return result;
    } catch (err) {
      await tx.query('rollback').catch(() => undefined);
      tx.release(err instanceof Error ? err : true);
      throw err;
    }
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spend budgets (docs/budgets.md): the caps, a catalog entity; per budget and period the spend
 * settled so far (the row a reservation locks); and the ledger: every reservation of a model
 * call with what it settled to, and the budget periods it was held against (`open` while held).
 * The ledger names budgets by code without a foreign key, so it outlives a deleted budget.
 */
export class Budgets1732200022000 implements MigrationInterface {
  name = 'Budgets1732200022000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create table cat_budgets (code varchar(32) primary key, description varchar(500),
      scope varchar(8) not null check (scope in ('subject', 'agent', 'action')),
      target varchar(200) not null,
      period varchar(8) not null check (period in ('day', 'month')),
      cap double precision not null check (cap >= 0))`);
    await q.query('create index cat_budgets_target on cat_budgets (target, scope)');
    await q.query(`create table budget_periods (budget varchar(32) not null, period_start date not null,
      spent numeric not null default 0, primary key (budget, period_start))`);
    await q.query(`create table budget_reservations (id uuid primary key, conversation_id uuid not null,
      turn_no integer not null, call_no integer not null, subject varchar(200) not null,
      agent_code varchar(64) not null, action_code varchar(64) not null, model varchar(200) not null,
      amount numeric not null, actual numeric,
      status varchar(8) not null check (status in ('open', 'settled', 'released')),
      note varchar(200), reserved_at timestamptz not null default now(), expires_at timestamptz not null,
      settled_at timestamptz)`);
    await q.query(
      `create index budget_reservations_open on budget_reservations (conversation_id) where status = 'open'`,
    );
    await q.query(`create table budget_holds (budget varchar(32) not null, period_start date not null,
      reservation_id uuid not null references budget_reservations on delete cascade,
      amount numeric not null, expires_at timestamptz not null, open boolean not null default true,
      primary key (budget, period_start, reservation_id))`);
    await q.query('create index budget_holds_open on budget_holds (budget, period_start) where open');
    await q.query('create index budget_holds_reservation on budget_holds (reservation_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table budget_holds');
    await q.query('drop table budget_reservations');
    await q.query('drop table budget_periods');
    await q.query('drop table cat_budgets');
  }
}

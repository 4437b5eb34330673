import type { Config } from '@parley/config';
import { createPgPool } from '@parley/platform';
import type { Pool } from 'pg';
import { CatalogService } from '../apply/catalog.service';
import { openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { SpendBudgets } from './spend-budgets';

describe('SpendBudgets: which budgets apply, kept for BUDGETS_CACHE_MS', () => {
  let t: CatalogTestDb;
  let pool: Pool;
  const spender = { subject: 'alice', agentCode: 'HELPDESK', actionCode: 'CHAT' };
  const budgetsOf = (cacheMs: number) =>
    new SpendBudgets(pool, { turn: { budgetsCacheMs: cacheMs } } as unknown as Config);
  const budget = (code: string, cap = 5) => ({
    budgets: [{ code, description: 'test', scope: 'subject', target: 'alice', period: 'day', cap }],
  });

  beforeAll(async () => {
    t = await openCatalogDb('spend_budgets');
    pool = createPgPool({ url: t.db.url, max: 4 });
  });
  afterAll(async () => {
    await pool.end();
    await t.close();
  });

  it('reads them once within the time, sees a change made here at once and one made elsewhere after it', async () => {
    const here = budgetsOf(60_000);
    // Two other processes: one whose time outlasts the test, one whose time is short.
    const elsewhere = budgetsOf(60_000);
    const shortly = budgetsOf(100);
    const catalog = new CatalogService(t.dataSource, testCipher(), null, null, null, here);
    const queries = jest.spyOn(pool, 'query');
    try {
      expect(await here.applying(spender)).toEqual([]);
      expect(await elsewhere.applying(spender)).toEqual([]);
      expect(await shortly.applying(spender)).toEqual([]);
      await Promise.all([here.applying(spender), here.applying(spender)]);
      expect(queries).toHaveBeenCalledTimes(3);

      await catalog.apply(budget('DAILY'), { dryRun: false });
      // This process applied it: its next model call counts it.
      expect((await here.applying(spender)).map((b) => b.code)).toEqual(['DAILY']);
      // Another process keeps what it read until its time is up…
      expect(await elsewhere.applying(spender)).toEqual([]);
      // …and reads again once it is.
      await new Promise((r) => setTimeout(r, 150));
      expect(await shortly.applying(spender)).toEqual([expect.objectContaining({ code: 'DAILY', cap: 5 })]);
    } finally {
      queries.mockRestore();
    }
  });

  it('reads them for every call with 0', async () => {
    const uncached = budgetsOf(0);
    const queries = jest.spyOn(pool, 'query');
    try {
      await uncached.applying(spender);
      await uncached.applying(spender);
      expect(queries).toHaveBeenCalledTimes(2);
    } finally {
      queries.mockRestore();
    }
  });

  it('reserves against the cap as it is now, whatever list was kept', async () => {
    const kept = budgetsOf(60_000);
    const catalog = new CatalogService(t.dataSource, testCipher(), null, null, null, kept);
    await catalog.apply(budget('CAPPED', 1), { dryRun: false });
    const applying = (await kept.applying(spender)).filter((b) => b.code === 'CAPPED');
    // The cap is lowered by another process: the list kept here still names the budget, and the
    // reservation reads its cap afresh.
    await pool.query(`update cat_budgets set cap = 0.000001 where code = 'CAPPED'`);
    const call = {
      ...spender,
      conversationId: '0190a0a0-0000-7000-8000-000000000001',
      turnNo: 1,
      callNo: 1,
      model: 'm',
      amount: 0.5,
      expiresAt: new Date(Date.now() + 60_000),
    };
    expect(await kept.reserve(applying, call)).toMatchObject({ ok: false, refusal: { budget: 'CAPPED' } });
  });
});

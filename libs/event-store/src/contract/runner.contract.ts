import type { ClientBase, PoolClient } from 'pg';
import type { RecordedEvent } from '../event-store.port';
import { readCheckpoint, resetSubscription } from '../subscription/checkpoints';
import {
  runSubscription,
  type CheckpointSwap,
  type SubscriptionRunner,
  type SubscriptionSettings,
} from '../subscription/subscription-runner';
import { event, events, eventually, newCategory, newStream, type ContractHarness } from './contract-kit';

interface Effects {
  total: number;
  distinct: number;
}

/** Point 9: checkpointed subscriptions apply each event's effect exactly once. */
export function runnerContract(h: () => ContractHarness): void {
  describe('9. checkpointed subscriptions', () => {
    const running: SubscriptionRunner[] = [];

    beforeAll(async () => {
      await h().pool.query(
        'create table if not exists contract_effects (subscription_id text not null, event_id text not null)',
      );
    });

    afterEach(async () => {
      await Promise.all(running.splice(0).map((r) => r.stop()));
    });

    const effects = async (subscriptionId: string): Promise<Effects> => {
      const { rows } = await h().pool.query<{ total: number; distinct: number }>(
        `select count(*)::int as total, count(distinct event_id)::int as distinct
         from contract_effects where subscription_id = $1`,
        [subscriptionId],
      );
      return rows[0];
    };
    /** Appends ten events to a new stream of `category`; `runner` must apply each exactly once. */
    const appliesTenOnce = async (runner: SubscriptionRunner, subscriptionId: string, category: string) => {
      const { position } = await h().store.append(newStream(category), events(10));
      expect(await runner.waitForPosition(position, 15_000)).toBe(true);
      expect(await effects(subscriptionId)).toEqual({ total: 10, distinct: 10 });
    };

    const record = (subscriptionId: string, list: RecordedEvent[], tx: PoolClient) =>
      tx.query('insert into contract_effects (subscription_id, event_id) select $1, unnest($2::text[])', [
        subscriptionId,
        list.map((e) => e.eventId),
      ]);

    /** What every runner here shares: small batches, quick polls, retries and lock takeovers. */
    const settings = (subscriptionId: string, category: string): SubscriptionSettings => ({
      pool: h().pool,
      feed: h().store,
      subscriptionId,
      filter: { categories: [category] },
      batchSize: 4,
      pollMs: 50,
      retryMs: 50,
      lockRetryMs: 100,
    });
    const track = (runner: SubscriptionRunner) => {
      running.push(runner);
      return runner;
    };

    const start = (
      subscriptionId: string,
      category: string,
      handle: (list: RecordedEvent[], tx: PoolClient) => Promise<void>,
      more: Partial<SubscriptionSettings> = {},
    ) => track(runSubscription({ ...settings(subscriptionId, category), handle, ...more }));

    it('a handler that throws after writing leaves no effect; the retry applies it once', async () => {
      const [id, category] = [`throw-${newCategory()}`, newCategory()];
      let failures = 0;
      const runner = start(id, category, async (list, tx) => {
        await record(id, list, tx);
        if (failures++ < 2) throw new Error('crash between the write and the checkpoint');
      });
      await appliesTenOnce(runner, id, category);
      expect(runner.lastError).toMatchObject({ message: 'crash between the write and the checkpoint' });
    });

    it('a connection killed before the commit leaves no effect; the retry applies it once', async () => {
      const { pool } = h();
      const [id, category] = [`kill-${newCategory()}`, newCategory()];
      let kills = 0;
      const runner = start(id, category, async (list, tx) => {
        await record(id, list, tx);
        if (kills++ < 2) {
          const { rows } = await tx.query<{ pid: number }>('select pg_backend_pid() as pid');
          await pool.query('select pg_terminate_backend($1)', [rows[0].pid]);
        }
      });
      await appliesTenOnce(runner, id, category);
      expect(kills).toBeGreaterThan(2);
    });

    it('runs one instance per subscription; a standby takes over when the holder dies', async () => {
      const { store, pool } = h();
      const [id, category] = [`standby-${newCategory()}`, newCategory()];
      const handle = (list: RecordedEvent[], tx: PoolClient) => record(id, list, tx).then(() => undefined);
      const runners = [start(id, category, handle), start(id, category, handle)];
      const activeOnes = () => runners.filter((r) => r.active);
      await eventually(async () => expect(activeOnes()).toHaveLength(1));
      await new Promise((r) => setTimeout(r, 300));
      expect(activeOnes()).toHaveLength(1);
      const first = await store.append(newStream(category), events(6));
      expect(await activeOnes()[0].waitForPosition(first.position, 15_000)).toBe(true);

      // The holder's lock connection dies: some instance holds the lock again and carries on.
      await pool.query(
        `select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted
           and objid = (hashtextextended('parley.subscription:' || $1::text, 0) & 4294967295)::oid`,
        [id],
      );
      const second = await store.append(newStream(category), events(6));
      await eventually(async () => expect(activeOnes()).toHaveLength(1));
      expect(await activeOnes()[0].waitForPosition(second.position, 15_000)).toBe(true);

      // The holder stops for good: the standby takes over.
      const holder = activeOnes()[0];
      await holder.stop();
      const standby = runners.find((r) => r !== holder) as SubscriptionRunner;
      await eventually(async () => expect(standby.active).toBe(true));
      const third = await store.append(newStream(category), events(6));
      expect(await standby.waitForPosition(third.position, 15_000)).toBe(true);
      expect(await effects(id)).toEqual({ total: 18, distinct: 18 });
    });

    it('reset rebuilds from the beginning, clearing the read model in the same transaction', async () => {
      const { store } = h();
      const [id, category] = [`reset-${newCategory()}`, newCategory()];
      const runner = start(id, category, (list, tx) => record(id, list, tx).then(() => undefined));
      const { position } = await store.append(newStream(category), events(5));
      expect(await runner.waitForPosition(position, 15_000)).toBe(true);
      await runner.reset(
        async (tx) => void (await tx.query('delete from contract_effects where subscription_id = $1', [id])),
      );
      await eventually(async () => expect(await effects(id)).toEqual({ total: 5, distinct: 5 }));
      expect(await runner.waitForPosition(position, 15_000)).toBe(true);
    });

    it('notices a reset made by another process, whether idle or woken by an append', async () => {
      const { store, pool } = h();
      const [id, category] = [`foreign-reset-${newCategory()}`, newCategory()];
      const clear = async (tx: ClientBase) =>
        void (await tx.query('delete from contract_effects where subscription_id = $1', [id]));
      // Idle: only its poll can see the reset, since no batch follows.
      const idle = start(id, category, (list, tx) => record(id, list, tx).then(() => undefined));
      const first = await store.append(newStream(category), events(5));
      expect(await idle.waitForPosition(first.position, 15_000)).toBe(true);
      await resetSubscription(pool, id, clear);
      await eventually(async () => expect(await effects(id)).toEqual({ total: 5, distinct: 5 }));
      await idle.stop();

      // Woken by an append: with a poll this slow, the batch's compare-and-set notices the reset.
      const woken = start(id, category, (list, tx) => record(id, list, tx).then(() => undefined), { pollMs: 5000 });
      await eventually(async () => expect(woken.caughtUp).toBe(true));
      await resetSubscription(pool, id, clear);
      const second = await store.append(newStream(category), events(1));
      await eventually(async () => expect(await effects(id)).toEqual({ total: 6, distinct: 6 }));
      expect(await woken.waitForPosition(second.position, 15_000)).toBe(true);
    });

    it('commits a batch without waiting for the WAL flush only when synchronousCommit is false', async () => {
      const { store } = h();
      const category = newCategory();
      const [relaxed, strict] = [`relaxed-${category}`, `strict-${category}`];
      const seen: Record<string, string> = {};
      const show = (id: string) => async (_list: RecordedEvent[], tx: PoolClient) => {
        const { rows } = await tx.query<{ synchronous_commit: string }>('show synchronous_commit');
        seen[id] = rows[0].synchronous_commit;
      };
      const runners = [
        start(relaxed, category, show(relaxed), { synchronousCommit: false }),
        start(strict, category, show(strict)),
      ];
      const { position } = await store.append(newStream(category), [event()]);
      for (const runner of runners) expect(await runner.waitForPosition(position, 15_000)).toBe(true);
      expect(seen).toEqual({ [relaxed]: 'off', [strict]: 'on' });
    });

    describe('with writeBatch: each batch one statement with the checkpoint compare-and-set', () => {
      /** Records the events only when the swap moves the checkpoint, in one statement. */
      const recordGuarded = async (id: string, list: RecordedEvent[], db: ClientBase, checkpoint: CheckpointSwap) => {
        const swap = checkpoint.statement(3);
        const { rows } = await db.query<{ moved: boolean }>(
          `with swap as (${swap.text}),
             w as (insert into contract_effects (subscription_id, event_id)
                   select $1, e from unnest($2::text[]) as e where exists (select from swap))
           select exists (select from swap) as moved`,
          [id, list.map((e) => e.eventId), ...swap.values],
        );
        return rows[0].moved;
      };
      const startWriting = (
        id: string,
        category: string,
        writeBatch: (list: RecordedEvent[], db: ClientBase, checkpoint: CheckpointSwap) => Promise<boolean>,
        more: Partial<SubscriptionSettings> = {},
      ) => track(runSubscription({ ...settings(id, category), writeBatch, ...more }));

      it('applies each event once, also when its connection dies before the write', async () => {
        const [id, category] = [`batch-kill-${newCategory()}`, newCategory()];
        let kills = 0;
        const runner = startWriting(id, category, async (list, db, checkpoint) => {
          if (kills++ < 2) await db.query('select pg_terminate_backend(pg_backend_pid())');
          return recordGuarded(id, list, db, checkpoint);
        });
        await appliesTenOnce(runner, id, category);
        expect(kills).toBeGreaterThan(2);
      });

      it('writes nothing when the checkpoint moved between the batch read and its write', async () => {
        const { pool } = h();
        const [id, category] = [`batch-moved-${newCategory()}`, newCategory()];
        const moved: boolean[] = [];
        const runner = startWriting(id, category, async (list, db, checkpoint) => {
          // Another process resets the subscription while this batch is on its way.
          if (moved.length === 1)
            await resetSubscription(pool, id, async (tx) => {
              await tx.query('delete from contract_effects where subscription_id = $1', [id]);
            });
          moved.push(await recordGuarded(id, list, db, checkpoint));
          return moved[moved.length - 1];
        });
        await appliesTenOnce(runner, id, category);
        // The second batch lost its compare-and-set; the runner went back to the reset checkpoint.
        expect(moved.slice(0, 3)).toEqual([true, false, true]);
      });

      it('moves the checkpoint past events its filter skips without calling writeBatch', async () => {
        const { store } = h();
        const [id, category] = [`batch-skip-${newCategory()}`, newCategory()];
        let calls = 0;
        const runner = startWriting(id, category, async () => (calls++, true));
        const elsewhere = await store.append(newStream(newCategory()), [event()]);
        expect(await runner.waitForPosition(elsewhere.position, 15_000)).toBe(true);
        expect(calls).toBe(0);
        expect(await readCheckpoint(h().pool, id)).toBe(runner.position);
      });

      it('writes on a connection without synchronous commit only when synchronousCommit is false', async () => {
        const { store } = h();
        const category = newCategory();
        const [relaxed, strict] = [`batch-relaxed-${category}`, `batch-strict-${category}`];
        const seen: Record<string, string> = {};
        const show = (id: string) => async (list: RecordedEvent[], db: ClientBase, checkpoint: CheckpointSwap) => {
          const { rows } = await db.query<{ synchronous_commit: string }>('show synchronous_commit');
          seen[id] = rows[0].synchronous_commit;
          return recordGuarded(id, list, db, checkpoint);
        };
        const runners = [
          startWriting(relaxed, category, show(relaxed), { synchronousCommit: false }),
          startWriting(strict, category, show(strict)),
        ];
        const { position } = await store.append(newStream(category), [event()]);
        for (const runner of runners) expect(await runner.waitForPosition(position, 15_000)).toBe(true);
        expect(seen).toEqual({ [relaxed]: 'off', [strict]: 'on' });
      });
    });

    describe('react: reacted to outside any transaction, then the checkpoint moves by compare-and-set', () => {
      const startReacting = (id: string, category: string, react: (list: RecordedEvent[]) => Promise<void>) =>
        track(runSubscription({ ...settings(id, category), react }));

      it('reacts to every event and moves the checkpoint past them', async () => {
        const [id, category] = [`react-${newCategory()}`, newCategory()];
        const seen: string[] = [];
        const runner = startReacting(id, category, async (list) => void seen.push(...list.map((e) => e.eventId)));
        const { position } = await h().store.append(newStream(category), events(10));
        expect(await runner.waitForPosition(position, 15_000)).toBe(true);
        expect(new Set(seen).size).toBe(10);
        expect(await readCheckpoint(h().pool, id)).toBe(runner.position);
      });

      it('reacts again to a batch whose checkpoint was moved under it (a reset), and leaves no transaction open', async () => {
        const { pool, store } = h();
        const [id, category] = [`react-reset-${newCategory()}`, newCategory()];
        const seen: string[] = [];
        let resets = 0;
        const runner = startReacting(id, category, async (list) => {
          seen.push(...list.map((e) => e.eventId));
          // Another process resets the subscription while the second batch is reacted to.
          if (resets++ === 1) await resetSubscription(pool, id);
          const { rows } = await pool.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and backend_xid is not null and query ilike '%es_checkpoints%'`,
          );
          expect(rows[0].n).toBe(0);
        });
        const { position } = await store.append(newStream(category), events(10));
        expect(await runner.waitForPosition(position, 15_000)).toBe(true);
        // The second batch lost its compare-and-set; from the reset checkpoint all came again.
        expect(seen.length).toBeGreaterThan(10);
        expect(new Set(seen).size).toBe(10);
      });
    });

    it('waitForPosition also passes events its filter skips, and times out with false', async () => {
      const { store } = h();
      const [id, category] = [`wait-${newCategory()}`, newCategory()];
      const runner = start(id, category, (list, tx) => record(id, list, tx).then(() => undefined));
      const elsewhere = await store.append(newStream(newCategory()), [event()]);
      expect(await runner.waitForPosition(elsewhere.position, 15_000)).toBe(true);
      expect(await effects(id)).toEqual({ total: 0, distinct: 0 });
      await runner.stop();
      const later = await store.append(newStream(category), [event()]);
      expect(await runner.waitForPosition(later.position, 100)).toBe(false);
    });
  });
}

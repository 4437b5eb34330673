import { createTestDatabase, startEmbeddedPostgresForTest } from '@parley/testing';
import { Pool } from 'pg';
import { SWEEP_BATCH, type NewMemory } from './memory-rows';
import { MemoryStore } from './memory-store';

const DAY = 86_400_000;
const now = new Date('2026-06-01T12:00:00Z');
const inDays = (n: number) => new Date(now.getTime() + n * DAY);

/** Unit vectors on named axes, mixed: facts on the same axes as a query are close to it. */
const AXES = ['colour', 'food', 'city', 'pet'] as const;
const vec = (weights: Partial<Record<(typeof AXES)[number], number>>) => AXES.map((a) => weights[a] ?? 0);

const fact = (over: Partial<NewMemory> & Pick<NewMemory, 'text'>): NewMemory => ({
  owner: 'acme',
  scope: 'user',
  scopeId: 'u1',
  importance: 0.5,
  expiresAt: null,
  embedding: vec({ colour: 1 }),
  ...over,
});

function describeMemoryStore(name: string, open: () => Promise<{ db: Pool; close: () => Promise<void> }>) {
  describe(`MemoryStore on ${name}`, () => {
    let db: Pool;
    let close: () => Promise<void>;
    let store: MemoryStore;
    beforeAll(async () => {
      ({ db, close } = await open());
      store = new MemoryStore(db);
      await store.init();
      // Starting PGlite takes a while on a busy machine.
    }, 60_000);
    afterAll(() => close?.());
    beforeEach(() => db.query('delete from kn_memories'));

    it('recalls only the owner’s facts of the asked subjects: never another owner’s or another user’s', async () => {
      await store.remember(fact({ text: 'favourite colour is teal' }), now);
      await store.remember(fact({ text: 'u2 likes red', scopeId: 'u2' }), now);
      await store.remember(fact({ text: 'other owner: colour is blue', owner: 'globex' }), now);
      const hits = await store.recall({
        owner: 'acme',
        scopes: { user: 'u1' },
        vector: vec({ colour: 1 }),
        limit: 5,
        now,
      });
      expect(hits.map((h) => h.memory.text)).toEqual(['favourite colour is teal']);
      const other = await store.recall({
        owner: 'globex',
        scopes: { user: 'u1' },
        vector: vec({ colour: 1 }),
        limit: 5,
        now,
      });
      expect(other.map((h) => h.memory.text)).toEqual(['other owner: colour is blue']);
      expect(
        await store.recall({ owner: 'initech', scopes: { user: 'u1' }, vector: vec({ colour: 1 }), limit: 5, now }),
      ).toEqual([]);
    });

    it('merges the scopes by score: session before user before agent before organisation at equal similarity', async () => {
      await store.remember(fact({ text: 'org fact', scope: 'organisation', scopeId: '' }), now);
      await store.remember(fact({ text: 'agent fact', scope: 'agent', scopeId: 'HELPDESK' }), now);
      await store.remember(fact({ text: 'user fact', scope: 'user', scopeId: 'u1' }), now);
      await store.remember(fact({ text: 'session fact', scope: 'session', scopeId: 'c1' }), now);
      await store.remember(fact({ text: 'other session', scope: 'session', scopeId: 'c2' }), now);
      const hits = await store.recall({
        owner: 'acme',
        scopes: { session: 'c1', user: 'u1', agent: 'HELPDESK', organisation: '' },
        vector: vec({ colour: 1 }),
        limit: 10,
        now,
      });
      expect(hits.map((h) => h.memory.text)).toEqual(['session fact', 'user fact', 'agent fact', 'org fact']);
      expect(hits[0].similarity).toBeCloseTo(1, 5);
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
      expect(hits[0].score).toBeCloseTo(1 * (0.75 + 0.25 * 0.5) * 1, 5);
    });

    it('ranks by similarity, boosted by importance, and leaves out facts under the similarity floor', async () => {
      await store.remember(
        fact({ text: 'close, unimportant', embedding: vec({ colour: 1, food: 0.3 }), importance: 0 }),
        now,
      );
      await store.remember(
        fact({ text: 'close, important', embedding: vec({ colour: 1, food: 0.3 }), importance: 1 }),
        now,
      );
      await store.remember(fact({ text: 'exact', embedding: vec({ colour: 1 }), importance: 0.5 }), now);
      await store.remember(fact({ text: 'unrelated', embedding: vec({ city: 1 }) }), now);
      const hits = await store.recall({
        owner: 'acme',
        scopes: { user: 'u1' },
        vector: vec({ colour: 1 }),
        limit: 10,
        minSimilarity: 0.5,
        now,
      });
      expect(hits.map((h) => h.memory.text)).toEqual(['close, important', 'exact', 'close, unimportant']);
      expect(
        (await store.recall({ owner: 'acme', scopes: { user: 'u1' }, vector: vec({ colour: 1 }), limit: 2, now }))
          .length,
      ).toBe(2);
    });

    it('never compares the query with a fact embedded at another length (another embedding model)', async () => {
      await store.remember(fact({ text: 'old model', embedding: [1, 0] }), now);
      await store.remember(fact({ text: 'current model' }), now);
      const hits = await store.recall({
        owner: 'acme',
        scopes: { user: 'u1' },
        vector: vec({ colour: 1 }),
        limit: 5,
        now,
      });
      expect(hits.map((h) => h.memory.text)).toEqual(['current model']);
    });

    it('refreshes the same fact of the same scope instead of storing it twice', async () => {
      const first = await store.remember(fact({ text: 'likes tea', importance: 0.2 }), now);
      const again = await store.remember(fact({ text: 'likes tea', importance: 0.9, expiresAt: inDays(5) }), inDays(1));
      expect(first.updated).toBe(false);
      expect(again.updated).toBe(true);
      expect(again.memory.id).toBe(first.memory.id);
      expect(again.memory).toMatchObject({ importance: 0.9, expiresAt: inDays(5).toISOString() });
      const elsewhere = await store.remember(fact({ text: 'likes tea', scope: 'agent', scopeId: 'A' }), now);
      expect(elsewhere.memory.id).not.toBe(first.memory.id);
      expect(await store.list({ owner: 'acme' }, { limit: 10 }, now)).toHaveLength(2);
    });

    it('never recalls or lists an expired fact, and sweeps expired rows on write, a bounded batch at a time', async () => {
      await store.remember(fact({ text: 'short-lived', expiresAt: inDays(1) }), now);
      await store.remember(fact({ text: 'lasting', expiresAt: inDays(30) }), now);
      const later = inDays(2);
      const hits = await store.recall({
        owner: 'acme',
        scopes: { user: 'u1' },
        vector: vec({ colour: 1 }),
        limit: 5,
        now: later,
      });
      expect(hits.map((h) => h.memory.text)).toEqual(['lasting']);
      expect((await store.list({ owner: 'acme' }, { limit: 10 }, later)).map((m) => m.text)).toEqual(['lasting']);
      // Stored long ago, expired yesterday: no write since has swept them.
      for (let i = 0; i < SWEEP_BATCH + 5; i++)
        await store.remember(fact({ text: `old ${i}`, scopeId: 'u9', expiresAt: inDays(-1) }), inDays(-10));
      await store.remember(fact({ text: 'new' }), later);
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from kn_memories where expires_at <= $1`,
        [later],
      );
      // The write swept one batch (the short-lived fact and 99 of the old ones); the next takes the rest.
      expect(rows[0].n).toBe(SWEEP_BATCH + 6 - SWEEP_BATCH);
      expect(await store.sweep(later)).toBe(6);
    });

    it('lists a subject’s facts newest first, page by page, and deletes one or a subject’s all, by owner only', async () => {
      const a = await store.remember(fact({ text: 'a' }), now);
      const b = await store.remember(fact({ text: 'b' }), inDays(1));
      const c = await store.remember(fact({ text: 'c' }), inDays(2));
      await store.remember(fact({ text: 'other user', scopeId: 'u2' }), now);
      await store.remember(fact({ text: 'other owner', owner: 'globex' }), now);
      const first = await store.list({ owner: 'acme', scope: 'user', scopeId: 'u1' }, { limit: 2 }, now);
      expect(first.map((m) => m.text)).toEqual(['c', 'b']);
      const next = await store.list(
        { owner: 'acme', scope: 'user', scopeId: 'u1' },
        { limit: 2, after: first[1].id },
        now,
      );
      expect(next.map((m) => m.text)).toEqual(['a']);
      expect((await store.list({ owner: null }, { limit: 10 }, now)).length).toBe(5);

      expect(await store.delete('globex', a.memory.id)).toBe(false);
      expect(await store.get('globex', a.memory.id, now)).toBeNull();
      expect(await store.delete('acme', a.memory.id)).toBe(true);
      expect(await store.delete('acme', a.memory.id)).toBe(false);
      expect(await store.delete('acme', 'not-a-uuid')).toBe(false);
      expect(await store.get('acme', b.memory.id, now)).toMatchObject({ text: 'b', scope: 'user', scopeId: 'u1' });

      expect(await store.deleteMany({ owner: 'acme', scope: 'user', scopeId: 'u1' })).toBe(2);
      expect(await store.get('acme', c.memory.id, now)).toBeNull();
      expect((await store.list({ owner: null }, { limit: 10 }, now)).map((m) => m.text).sort()).toEqual([
        'other owner',
        'other user',
      ]);
    });

    it('refuses an empty fact, an unknown scope and an empty embedding, and writes nothing', async () => {
      await expect(store.remember(fact({ text: '  ' }), now)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.remember(fact({ text: 'x', scope: 'planet' as never }), now)).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
      });
      await expect(store.remember(fact({ text: 'x', embedding: [] }), now)).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
      });
      expect(await store.list({ owner: null }, { limit: 10 }, now)).toEqual([]);
    });
  });
}

describeMemoryStore('PostgreSQL', async () => {
  const database = await createTestDatabase('memories');
  const db = new Pool({ connectionString: database.url, max: 2 });
  return {
    db,
    close: async () => {
      await db.end();
      await database.drop();
    },
  };
});

describeMemoryStore('the embedded PGlite', async () => {
  const pg = await startEmbeddedPostgresForTest();
  const db = new Pool({ connectionString: pg.url, max: 1 });
  return {
    db,
    close: async () => {
      await db.end();
      await pg.stop();
    },
  };
});

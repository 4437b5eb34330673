import type { EventStore } from '../event-store.port';
import { comparePositions } from '../position';
import {
  collect,
  event,
  eventIdsOf,
  events,
  eventually,
  newCategory,
  newStream,
  readCategory,
  type ContractHarness,
} from './contract-kit';

const ascending = (positions: string[]) =>
  positions.every((p, i) => i === 0 || comparePositions(positions[i - 1], p) < 0);

/** Points 6, 7 and 12: the global feed's order, late commits, and positions never reused. */
export function feedContract(h: () => ContractHarness): void {
  describe('6. global order', () => {
    it('is a stable total order consistent with every stream’s revisions', async () => {
      const { store } = h();
      const category = newCategory();
      const streams = Array.from({ length: 4 }, () => newStream(category));
      await Promise.all(
        streams.map(async (stream) => {
          for (let i = 0; i < 5; i++) await store.append(stream, events(2));
        }),
      );
      const all = await eventually(async () => {
        const read = await readCategory(store, category);
        expect(read).toHaveLength(40);
        return read;
      });
      expect(ascending(all.map((e) => e.position))).toBe(true);
      for (const stream of streams) {
        const revisions = all.filter((e) => e.streamId === stream).map((e) => Number(e.revision));
        expect(revisions).toEqual(Array.from({ length: 10 }, (_, i) => i));
      }
      expect(await readCategory(store, category)).toEqual(all);
      const paged = [];
      let from: string | undefined;
      for (;;) {
        const page = await store.readAll({ fromPosition: from, maxCount: 7, filter: { categories: [category] } });
        if (page.length === 0) break;
        paged.push(...page);
        from = page[page.length - 1].position;
      }
      expect(paged).toEqual(all);
    });
  });

  describe('7. out-of-order commit', () => {
    it('does not deliver a later commit before an earlier open transaction, and never skips it', async () => {
      const { store, holdOpenAppend } = h();
      const category = newCategory();
      const a = event('A');
      const b = event('B');
      if (!holdOpenAppend) {
        // Stores without open write transactions commit in position order: check that order.
        await store.append(newStream(category), [a]);
        await store.append(newStream(category), [b]);
        const read = await eventually(async () => {
          const all = await readCategory(store, category);
          expect(all).toHaveLength(2);
          return all;
        });
        expect(read.map((e) => e.eventId)).toEqual([a.eventId, b.eventId]);
        return;
      }
      const open = await holdOpenAppend(newStream(category), [a]);
      try {
        await store.append(newStream(category), [b]);
        await new Promise((r) => setTimeout(r, 300));
        expect(await readCategory(store, category)).toEqual([]);
        const live = collect(store, { filter: { categories: [category] } }, (seen) => eventIdsOf(seen).length === 2);
        await new Promise((r) => setTimeout(r, 300));
        await open.commit();
        const items = await live;
        expect(eventIdsOf(items)).toEqual([a.eventId, b.eventId]);
        expect(items[0]).toMatchObject({ kind: 'caughtUp' });
      } finally {
        await open.rollback();
      }
      const read = await readCategory(store, category);
      expect(read.map((e) => e.eventId)).toEqual([a.eventId, b.eventId]);
      expect(comparePositions(read[0].position, open.position)).toBe(0);
    });
  });

  describe('12. positions', () => {
    it('are never reused after a rollback or a failed append', async () => {
      const { store, holdOpenAppend } = h();
      const stream = newStream();
      const first = await store.append(stream, [event()]);
      let lost: string | null = null;
      if (holdOpenAppend) {
        const open = await holdOpenAppend(newStream(), [event()]);
        lost = open.position;
        await open.rollback();
      }
      await store.append(stream, [event()], { expected: 9n }).catch(() => undefined);
      const next = await store.append(stream, [event()]);
      expect(comparePositions(next.position, first.position)).toBeGreaterThan(0);
      if (lost) expect(comparePositions(next.position, lost)).toBeGreaterThan(0);
    });

    it('are never reused after a restart', async () => {
      const { store, reopen } = h();
      const before = await store.append(newStream(), [event()]);
      const restarted: EventStore = await reopen();
      try {
        const after = await restarted.append(newStream(), [event()]);
        expect(comparePositions(after.position, before.position)).toBeGreaterThan(0);
        expect(comparePositions((await restarted.headPosition()) ?? '', before.position)).toBeGreaterThan(0);
      } finally {
        await restarted.close();
      }
    });
  });
}

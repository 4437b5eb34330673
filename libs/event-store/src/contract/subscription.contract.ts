import {
  collect,
  event,
  eventIdsOf,
  eventually,
  newCategory,
  newStream,
  readCategory,
  type ContractHarness,
} from './contract-kit';

/** Point 8: catch-up subscriptions. */
export function subscriptionContract(h: () => ContractHarness): void {
  describe('8. catch-up subscriptions', () => {
    it('delivers history, then caughtUp, then live events', async () => {
      const { store } = h();
      const category = newCategory();
      const history = [event('H1'), event('H2')];
      await store.append(newStream(category), history);
      await eventually(async () => expect(await readCategory(store, category)).toHaveLength(2));
      const live = event('Live');
      let appended = false;
      const items = await collect(store, { filter: { categories: [category] } }, (seen) => {
        if (seen.at(-1)?.kind === 'caughtUp' && !appended) {
          appended = true;
          void store.append(newStream(category), [live]);
        }
        return eventIdsOf(seen).length === 3;
      });
      expect(items.map((i) => (i.kind === 'event' ? i.event.type : i.kind))).toEqual(['H1', 'H2', 'caughtUp', 'Live']);
    });

    it('resumes exclusive of the given position', async () => {
      const { store } = h();
      const category = newCategory();
      const batch = [event('E1'), event('E2'), event('E3')];
      await store.append(newStream(category), batch);
      const all = await eventually(async () => {
        const read = await readCategory(store, category);
        expect(read).toHaveLength(3);
        return read;
      });
      const items = await collect(
        store,
        { fromPosition: all[0].position, filter: { categories: [category] } },
        (seen) => seen.some((i) => i.kind === 'caughtUp'),
      );
      expect(eventIdsOf(items)).toEqual([batch[1].eventId, batch[2].eventId]);
    });

    it('filters by category and by event type', async () => {
      const { store } = h();
      const [mine, other] = [newCategory(), newCategory()];
      const wanted = event('Wanted');
      await store.append(newStream(mine), [event('Skipped'), wanted]);
      await store.append(newStream(other), [event('Wanted')]);
      await eventually(async () => expect(await readCategory(store, other)).toHaveLength(1));
      const byCategoryAndType = await collect(
        store,
        { filter: { categories: [mine], eventTypes: ['Wanted'] } },
        (seen) => seen.some((i) => i.kind === 'caughtUp'),
      );
      expect(eventIdsOf(byCategoryAndType)).toEqual([wanted.eventId]);
      const byCategory = await collect(store, { filter: { categories: [other] } }, (seen) =>
        seen.some((i) => i.kind === 'caughtUp'),
      );
      expect(byCategory.flatMap((i) => (i.kind === 'event' ? [i.event.category] : []))).toEqual([other]);
      const uniqueType = event(`Only${mine}`);
      await store.append(newStream(other), [uniqueType]);
      const byType = await collect(store, { filter: { eventTypes: [uniqueType.type] } }, (seen) =>
        eventIdsOf(seen).includes(uniqueType.eventId),
      );
      expect(eventIdsOf(byType)).toEqual([uniqueType.eventId]);
    });
  });
}

import { caught, event, events, newStream, type ContractHarness } from './contract-kit';

const revisions = (list: Array<{ revision: bigint }>) => list.map((e) => Number(e.revision));

/** Points 5, 10 and 11: reading streams, deletion and retention, payload fidelity. */
export function readContract(h: () => ContractHarness): void {
  describe('5. readStream', () => {
    let stream: string;
    beforeAll(async () => {
      stream = newStream();
      await h().store.append(stream, events(10));
    });

    it('reads forwards from a revision with a max count', async () => {
      expect(revisions(await h().store.readStream(stream))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(revisions(await h().store.readStream(stream, { fromRevision: 4n, maxCount: 3 }))).toEqual([4, 5, 6]);
    });

    it('reads backwards from the end or from a revision', async () => {
      const { store } = h();
      expect(revisions(await store.readStream(stream, { direction: 'backwards', maxCount: 2 }))).toEqual([9, 8]);
      expect(revisions(await store.readStream(stream, { direction: 'backwards', fromRevision: 3n }))).toEqual([
        3, 2, 1, 0,
      ]);
    });

    it('tells the newest revision of many streams at once, leaving out unknown and deleted ones', async () => {
      const { store } = h();
      const deleted = newStream();
      await store.append(deleted, events(2));
      await store.deleteStream(deleted);
      const unknown = newStream();
      const revisionsOf = await store.streamRevisions([stream, deleted, unknown]);
      expect([...revisionsOf]).toEqual([[stream, 9n]]);
      expect(await store.streamRevisions([])).toEqual(new Map());
    });

    it('returns nothing past the end and StreamNotFound for a missing stream', async () => {
      const { store } = h();
      expect(await store.readStream(stream, { fromRevision: 10n })).toEqual([]);
      expect(await caught(store.readStream(newStream()))).toMatchObject({ name: 'StreamNotFound' });
    });
  });

  describe('10. deletion and retention', () => {
    it('soft delete hides a stream; appending recreates it with revisions continuing', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(3));
      await store.deleteStream(stream);
      expect(await caught(store.readStream(stream))).toMatchObject({ name: 'StreamNotFound' });
      expect((await store.append(stream, [event()], { expected: 'no_stream' })).nextRevision).toBe(3n);
      expect(revisions(await store.readStream(stream))).toEqual([3]);
      expect((await store.getStreamMetadata(stream))?.truncateBefore).toBe(3n);
    });

    it('tombstone refuses reads and appends for ever', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(2));
      await store.tombstoneStream(stream);
      expect(await caught(store.readStream(stream))).toMatchObject({ name: 'StreamDeleted' });
      expect(await caught(store.append(stream, [event()], { expected: 'no_stream' }))).toMatchObject({
        name: 'StreamDeleted',
      });
    });

    it('maxCount keeps only the newest events visible', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(5));
      await store.setStreamMetadata(stream, { maxCount: 2 });
      expect(revisions(await store.readStream(stream))).toEqual([3, 4]);
      expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).toEqual([4, 3]);
    });

    it('truncateBefore hides the earlier revisions', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(5));
      await store.setStreamMetadata(stream, { truncateBefore: 3n });
      expect(revisions(await store.readStream(stream))).toEqual([3, 4]);
      expect(revisions(await store.readStream(stream, { fromRevision: 1n, maxCount: 1 }))).toEqual([3]);
    });

    it('maxAge hides events older than the age', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(2));
      await new Promise((r) => setTimeout(r, 1_200));
      await store.append(stream, [event()]);
      await store.setStreamMetadata(stream, { maxAgeSeconds: 1 });
      expect(revisions(await store.readStream(stream))).toEqual([2]);
    });
  });

  describe('11. fidelity', () => {
    it('round-trips data and metadata, unicode included', async () => {
      const { store } = h();
      const stream = newStream();
      const data = { text: 'héllo 世界 🎉 \u2028 "quoted" \\ back', nested: { list: [1, 2.5, -0.125, null, true] } };
      const metadata = { correlationId: 'c-1', actor: { id: 'ü', roles: ['a'] }, n: 12345678901234 };
      await store.append(stream, [{ ...event('Unicode ✓', data, metadata), schemaVersion: 3 }]);
      const [stored] = await store.readStream(stream);
      expect(stored).toMatchObject({ type: 'Unicode ✓', schemaVersion: 3, data, metadata });
      expect(stored.category).toBe(stream.split('-')[0]);
    });

    it('round-trips a 1 MiB payload', async () => {
      const { store } = h();
      const stream = newStream();
      const data = { blob: 'é'.repeat(512 * 1024), list: Array.from({ length: 1000 }, (_, i) => ({ i })) };
      await store.append(stream, [event('Large', data)]);
      const [stored] = await store.readStream(stream);
      expect(stored.data).toEqual(data);
      expect(await store.verifyStream(stream)).toEqual({ ok: true, checked: 1 });
    });

    it('round-trips stream metadata', async () => {
      const { store } = h();
      const stream = newStream();
      expect(await store.getStreamMetadata(stream)).toBeNull();
      const metadata = {
        maxCount: 10,
        maxAgeSeconds: 3600,
        truncateBefore: 2n,
        custom: { owner: 'tëam', tags: ['x'] },
      };
      await store.setStreamMetadata(stream, metadata);
      expect(await store.getStreamMetadata(stream)).toEqual(metadata);
    });
  });
}

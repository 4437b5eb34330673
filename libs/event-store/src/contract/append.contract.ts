import { DomainError } from '@parley/core';
import type { EventToAppend } from '../event-store.port';
import { caught, event, events, newCategory, newStream, readCategory, type ContractHarness } from './contract-kit';

const wrongVersion = (actual: string) =>
  expect.objectContaining({
    name: 'WrongExpectedVersion',
    code: 'CONCURRENCY_CONFLICT',
    details: expect.objectContaining({ actual }),
  });

/** Points 1–4 of the contract (docs/event-store.md): expected states, batches, idempotency, concurrent writers. */
export function appendContract(h: () => ContractHarness): void {
  describe('1. expected state', () => {
    it('accepts no_stream on a new stream and refuses it once the stream exists, naming the revision', async () => {
      const { store } = h();
      const stream = newStream();
      expect((await store.append(stream, events(2), { expected: 'no_stream' })).nextRevision).toBe(1n);
      const err = await caught(store.append(stream, [event()], { expected: 'no_stream' }));
      expect(err).toEqual(wrongVersion('1'));
      expect((err as Error).message).toMatch(/expected at no stream but is at revision 1/);
    });

    it('refuses stream_exists on a new stream and accepts it on an existing one', async () => {
      const { store } = h();
      const stream = newStream();
      expect(await caught(store.append(stream, [event()], { expected: 'stream_exists' }))).toEqual(
        wrongVersion('no_stream'),
      );
      await store.append(stream, [event()]);
      expect((await store.append(stream, [event()], { expected: 'stream_exists' })).nextRevision).toBe(1n);
    });

    it('accepts the exact current revision and refuses any other, naming the actual one', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(3));
      expect(await caught(store.append(stream, [event()], { expected: 1n }))).toEqual(wrongVersion('2'));
      expect(await caught(store.append(newStream(), [event()], { expected: 0n }))).toEqual(wrongVersion('no_stream'));
      expect((await store.append(stream, [event()], { expected: 2n })).nextRevision).toBe(3n);
    });

    it('accepts any on new and existing streams', async () => {
      const { store } = h();
      const stream = newStream();
      expect((await store.append(stream, [event()], { expected: 'any' })).nextRevision).toBe(0n);
      expect((await store.append(stream, [event()])).nextRevision).toBe(1n);
    });

    it('writes nothing when the expected state is wrong', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(1));
      await caught(store.append(stream, events(3), { expected: 5n }));
      expect(await store.readStream(stream)).toHaveLength(1);
    });
  });

  describe('2. batches', () => {
    it('stores a batch with consecutive revisions', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(3));
      expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n, 1n, 2n]);
    });

    it('writes none of a batch when one of its events is refused', async () => {
      const { store } = h();
      const category = newCategory();
      const stream = newStream(category);
      const batch: EventToAppend[] = [event(), event(), event('Bad', { n: Number.NaN })];
      expect(await caught(store.append(stream, batch))).toBeInstanceOf(DomainError);
      expect(await caught(store.readStream(stream))).toMatchObject({ name: 'StreamNotFound' });
      expect(await readCategory(store, category)).toEqual([]);
    });
  });

  describe('3. idempotency', () => {
    it('re-appending the same ids at the same revision writes nothing and succeeds', async () => {
      const { store } = h();
      const stream = newStream();
      const first = events(2);
      const a = await store.append(stream, first, { expected: 'no_stream' });
      const b = await store.append(stream, first, { expected: 'no_stream' });
      await store.append(stream, [event()], { expected: 1n });
      const c = await store.append(stream, first, { expected: 'no_stream' });
      expect(b).toEqual(a);
      expect(c).toEqual(a);
      expect(await store.readStream(stream)).toHaveLength(3);
    });

    it('re-appending a batch at an exact revision or with any writes nothing', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, [event()]);
      const batch = events(2);
      const a = await store.append(stream, batch, { expected: 0n });
      expect(await store.append(stream, batch, { expected: 0n })).toEqual(a);
      expect(await store.append(stream, batch)).toEqual(a);
      expect(await store.readStream(stream)).toHaveLength(3);
    });

    it('refuses a batch that only partly overlaps stored ids, writing nothing', async () => {
      const { store } = h();
      const stream = newStream();
      const stored = events(2);
      await store.append(stream, stored);
      const err = await caught<DomainError>(store.append(stream, [stored[1], event()], { expected: 1n }));
      expect(['IDEMPOTENCY_KEY_REUSED', 'CONCURRENCY_CONFLICT']).toContain(err.code);
      expect(await store.readStream(stream)).toHaveLength(2);
    });
  });

  describe('4. concurrent writers', () => {
    it('lets exactly one of 20 parallel appends at one revision win, without gaps', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, [event()]);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => store.append(stream, events(2), { expected: 0n })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost.map((r) => (r.reason as DomainError).code)).toEqual(Array(19).fill('CONCURRENCY_CONFLICT'));
      expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n, 1n, 2n]);
    });

    it('serialises 20 parallel appends with any into 20 consecutive revisions', async () => {
      const { store } = h();
      const stream = newStream();
      await Promise.all(Array.from({ length: 20 }, () => store.append(stream, [event()])));
      const stored = await store.readStream(stream);
      expect(stored.map((e) => e.revision)).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i)));
      expect(await store.verifyStream(stream)).toEqual({ ok: true, checked: 20 });
    });
  });
}

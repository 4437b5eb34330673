import type { DomainError } from '@parley/core';
import { caught, event, eventually, newCategory, newStream, readCategory, type ContractHarness } from './contract-kit';

const circular = (): unknown => {
  const value: Record<string, unknown> = { name: 'loop' };
  value.self = value;
  return value;
};

const notJson: Array<[string, () => unknown, RegExp]> = [
  ['undefined', () => ({ a: undefined }), /events\[0\]\.data\.a: undefined is not JSON/],
  ['a function', () => ({ f: () => 1 }), /events\[0\]\.data\.f: a function is not JSON/],
  ['a BigInt', () => ({ big: 10n }), /events\[0\]\.data\.big: a BigInt is not JSON/],
  ['NaN', () => [Number.NaN], /events\[0\]\.data\[0\]: NaN is not a JSON number/],
  ['Infinity', () => ({ x: Infinity }), /events\[0\]\.data\.x: Infinity is not a JSON number/],
  ['a circular reference', circular, /events\[0\]\.data\.self: a circular reference is not JSON/],
  ['a Date', () => ({ at: new Date() }), /events\[0\]\.data\.at: a Date is not plain JSON/],
];

/** Bad input: each refusal is typed, says what is wrong, and writes nothing. */
export function badInputContract(h: () => ContractHarness): void {
  describe('bad input', () => {
    it.each(notJson)('refuses a payload holding %s, naming where, and writes nothing', async (_, data, message) => {
      const { store } = h();
      const category = newCategory();
      const stream = newStream(category);
      const err = await caught<DomainError>(store.append(stream, [event('Bad', data())]));
      expect(err).toMatchObject({ name: 'InvalidEvent', code: 'VALIDATION_FAILED' });
      expect(err.message).toMatch(message);
      expect(await caught(store.readStream(stream))).toMatchObject({ code: 'NOT_FOUND' });
      expect(await readCategory(store, category)).toEqual([]);
    });

    it('refuses non-JSON metadata and a missing payload', async () => {
      const { store } = h();
      const stream = newStream();
      const err = await caught<DomainError>(
        store.append(stream, [{ ...event(), data: undefined }, event('T', {}, { at: Symbol('x') })]),
      );
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.details?.problems).toEqual([
        { path: 'events[0].data', message: 'undefined is not JSON' },
        { path: 'events[1].metadata.at', message: 'a symbol is not JSON' },
      ]);
    });

    it('refuses bad event ids, empty types and empty batches', async () => {
      const { store } = h();
      const stream = newStream();
      const bad = await caught<DomainError>(store.append(stream, [{ ...event(), eventId: 'nope', type: '' }]));
      expect(bad.details?.problems).toEqual([
        { path: 'events[0].eventId', message: 'expected a UUID' },
        { path: 'events[0].type', message: 'expected a non-empty string' },
      ]);
      expect(await caught(store.append(stream, []))).toMatchObject({ code: 'VALIDATION_FAILED' });
    });

    it('refuses an event over the size limit with PAYLOAD_TOO_LARGE and writes nothing', async () => {
      const { store, maxEventBytes } = h();
      const stream = newStream();
      await store.append(stream, [event()]);
      const big = event('Big', { text: 'x'.repeat(maxEventBytes) });
      const err = await caught<DomainError>(store.append(stream, [event(), big]));
      expect(err).toMatchObject({ name: 'EventTooLarge', code: 'PAYLOAD_TOO_LARGE' });
      expect(err.message).toMatch(
        new RegExp(`Event '${big.eventId}' is \\d+ bytes of JSON; the limit is ${maxEventBytes}`),
      );
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('refuses to append to a tombstoned stream with StreamDeleted and writes nothing', async () => {
      const { store } = h();
      const category = newCategory();
      const stream = newStream(category);
      await store.append(stream, [event()]);
      await store.tombstoneStream(stream);
      const err = await caught<DomainError>(store.append(stream, [event()]));
      expect(err).toMatchObject({ name: 'StreamDeleted', code: 'CONFLICT' });
      expect(err.message).toMatch(/permanently deleted/);
      await eventually(async () => expect(await readCategory(store, category)).toHaveLength(1));
    });

    it('answers a read of an unknown stream with StreamNotFound', async () => {
      const { store } = h();
      const stream = newStream();
      const err = await caught<DomainError>(store.readStream(stream));
      expect(err).toMatchObject({ name: 'StreamNotFound', code: 'NOT_FOUND', details: { streamId: stream } });
      expect(err.message).toBe(`Stream '${stream}' was not found.`);
    });
  });
}

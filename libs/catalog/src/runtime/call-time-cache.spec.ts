import { callTimeCache } from './call-time-cache';

describe('callTimeCache', () => {
  it('loads a code once within the TTL and again after it', async () => {
    let clock = 1_000;
    let loads = 0;
    const lookUp = callTimeCache(async (code) => ({ code, load: ++loads }), { ttlMs: 5_000, now: () => clock });
    expect(await lookUp('P')).toEqual({ code: 'P', load: 1 });
    clock = 5_999;
    expect(await lookUp('P')).toEqual({ code: 'P', load: 1 });
    expect(await lookUp('Q')).toEqual({ code: 'Q', load: 2 });
    clock = 6_001;
    expect(await lookUp('P')).toEqual({ code: 'P', load: 3 });
  });

  it('shares one load between concurrent lookups of a code', async () => {
    let loads = 0;
    const lookUp = callTimeCache(async (code) => {
      loads++;
      await new Promise((r) => setTimeout(r, 10));
      return { code };
    });
    await Promise.all([lookUp('P'), lookUp('P'), lookUp('P')]);
    expect(loads).toBe(1);
  });

  it('does not remember a failed load', async () => {
    let calls = 0;
    const lookUp = callTimeCache(async () => {
      if (++calls === 1) throw new Error('missing');
      return { ok: true };
    });
    await expect(lookUp('P')).rejects.toThrow('missing');
    expect(await lookUp('P')).toEqual({ ok: true });
  });
});

import { randomBytes } from 'node:crypto';
import { connectedRedis, type Redis } from '@parley/platform';
import { DomainError } from '@parley/core';
import { TurnSlots } from './turn-slots';

const REDIS_URL = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe.each(['redis', 'memory'] as const)('TurnSlots (%s)', (store) => {
  let redis: Redis | null = null;
  const slots = (maxPerSubject: number, ttlMs = 60_000) =>
    new TurnSlots({ redis, prefix: `test-${randomBytes(4).toString('hex')}`, maxPerSubject, ttlMs });

  beforeAll(async () => {
    if (store === 'redis') redis = await connectedRedis(REDIS_URL);
  });
  afterAll(async () => {
    await redis?.quit();
  });

  it('refuses a turn over the per-subject cap with RATE_LIMITED, for that subject only', async () => {
    const s = slots(2);
    await s.acquire('alice', 'c1');
    await s.acquire('alice', 'c2');

    const refused = await s.acquire('alice', 'c3').catch((err: unknown) => err);

    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { maxRunningTurns: 2 } });
    await expect(s.acquire('bob', 'c4')).resolves.toBe('taken');
  });

  it('lets the same conversation acquire again without taking a second slot, and says it was held', async () => {
    const s = slots(1);
    await expect(s.acquire('alice', 'c1')).resolves.toBe('taken');
    await expect(s.acquire('alice', 'c1')).resolves.toBe('held');
    await expect(s.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('frees a slot on release', async () => {
    const s = slots(1);
    await s.acquire('alice', 'c1');
    await s.release('alice', 'c1');
    await expect(s.acquire('alice', 'c2')).resolves.toBe('taken');
  });

  it('frees a slot nobody released once it expires (a crashed worker)', async () => {
    const s = slots(1, 200);
    await s.acquire('alice', 'c1');
    await new Promise((r) => setTimeout(r, 300));
    await expect(s.acquire('alice', 'c2')).resolves.toBe('taken');
  });

  it('keeps a held slot past its lifetime for as long as its turn is given, and takes none it does not hold', async () => {
    const s = slots(1, 200);
    await s.acquire('alice', 'c1');
    await s.holdFor('alice', 'c1', 1_000);
    await s.holdFor('bob', 'c9', 1_000);
    await new Promise((r) => setTimeout(r, 300));
    await expect(s.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await expect(s.acquire('bob', 'c10')).resolves.toBe('taken');
  });

  it('keeps working after Redis forgot its scripts (a restart, SCRIPT FLUSH)', async () => {
    const s = slots(1);
    await s.acquire('alice', 'c1');
    if (redis) await redis.script('FLUSH');
    await expect(s.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await s.release('alice', 'c1');
    await expect(s.acquire('alice', 'c2')).resolves.toBe('taken');
  });
});

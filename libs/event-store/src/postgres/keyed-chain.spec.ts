import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { createHmac, randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { canonicalJsonOf } from '../canonical-json';
import { events, newStream } from '../contract/contract-kit';
import { canonicalEvent, chainHash, GENESIS_HASH, KEYED_PREFIX } from '../hash-chain';
import { PostgresEventStore } from './postgres-event-store';

const options = { maxEventBytes: 1_048_576, pollMs: 50 };

describe('the keyed hash chain (EVENT_CHAIN_KEY) on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: Pool;
  const key = randomBytes(32);
  let keyed: PostgresEventStore;
  let plain: PostgresEventStore;

  beforeAll(async () => {
    database = await createTestDatabase('keyed_chain');
    pool = createPgPool({ url: database.url, max: 4 });
    keyed = new PostgresEventStore(pool, { ...options, chain: { key } });
    plain = new PostgresEventStore(pool, options);
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  /**
   * What someone who can write the database but does not hold the key can do: change an event's
   * data and recompute every hash from there on, consistently, as sha-256 or under a guessed key.
   */
  async function rewrite(streamId: string, from: bigint, guessedKey: Buffer | null = null): Promise<void> {
    const stored = await plain.readStream(streamId);
    let prev = from === 0n ? GENESIS_HASH : stored[Number(from) - 1].hash;
    for (const event of stored.slice(Number(from))) {
      const data = event.revision === from ? { n: 999 } : event.data;
      const canonical = canonicalEvent({
        ...event,
        dataJson: canonicalJsonOf(data),
        metadataJson: canonicalJsonOf(event.metadata),
      });
      const hash = chainHash(prev, canonical, guessedKey);
      await pool.query(
        `update es_events set data = $1, prev_hash = es_hash_bytes($2), hash = es_hash_bytes($3)
         where stream_id = $4 and revision = $5`,
        [JSON.stringify(data), prev, hash, streamId, event.revision],
      );
      prev = hash;
    }
    await pool.query('update es_streams set last_hash = es_hash_bytes($1) where stream_id = $2', [prev, streamId]);
  }

  it('chains HMAC-SHA256 hashes computed in SQL exactly as Node computes them', async () => {
    const stream = newStream();
    await keyed.append(stream, events(3));
    const stored = await keyed.readStream(stream);
    expect(stored.every((e) => e.hash.startsWith(KEYED_PREFIX))).toBe(true);
    const first = stored[0];
    const canonical = canonicalEvent({
      ...first,
      dataJson: canonicalJsonOf(first.data),
      metadataJson: canonicalJsonOf(first.metadata),
    });
    const hmac = createHmac('sha256', key).update(GENESIS_HASH).update(canonical).digest('hex');
    expect(first.hash).toBe(`${KEYED_PREFIX}${hmac}`);
    expect(await keyed.verifyStream(stream)).toEqual({ ok: true, checked: 3 });
  });

  it('catches a consistent rewrite in the database that the unkeyed chain cannot', async () => {
    const unkeyedStream = newStream();
    await plain.append(unkeyedStream, events(4));
    await rewrite(unkeyedStream, 1n);
    expect(await plain.verifyStream(unkeyedStream)).toEqual({ ok: true, checked: 4 });

    const stream = newStream();
    await keyed.append(stream, events(4));
    await rewrite(stream, 1n);
    expect(await keyed.verifyStream(stream)).toMatchObject({
      ok: false,
      firstBadRevision: 1n,
      reason: 'an unkeyed event follows keyed ones',
    });

    const guessed = newStream();
    await keyed.append(guessed, events(4));
    await rewrite(guessed, 2n, randomBytes(32));
    expect(await keyed.verifyStream(guessed)).toMatchObject({
      ok: false,
      firstBadRevision: 2n,
      reason: 'content does not match its hash',
    });
  });

  it('with EVENT_CHAIN_REQUIRE_KEYED, catches a stream rewritten wholly unkeyed', async () => {
    const stream = newStream();
    await keyed.append(stream, events(3));
    await rewrite(stream, 0n);
    const strict = new PostgresEventStore(pool, { ...options, chain: { key, requireKeyed: true } });
    expect(await strict.verifyStream(stream)).toMatchObject({
      ok: false,
      firstBadRevision: 0n,
      reason: 'the event is not keyed, and keyed events are required',
    });
  });

  it('keeps verifying streams written before the key, and streams that became keyed', async () => {
    const legacy = newStream();
    await plain.append(legacy, events(2));
    expect(await keyed.verifyStream(legacy)).toEqual({ ok: true, checked: 2 });
    await keyed.append(legacy, events(2));
    expect(await keyed.verifyStream(legacy)).toEqual({ ok: true, checked: 4 });
    expect(await plain.verifyStream(legacy)).toMatchObject({
      ok: false,
      firstBadRevision: 2n,
      reason: 'the event is keyed: verifying it needs EVENT_CHAIN_KEY',
    });
  });
});

import { createPgPool } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { BinaryHashes1732200024000 } from '../../../../migrations/1732200024000-binary-hashes';
import { events, newStream } from '../contract/contract-kit';
import { KEYED_PREFIX } from '../hash-chain';
import { PostgresEventStore } from './postgres-event-store';

const options = { maxEventBytes: 1_048_576, pollMs: 50 };

interface HashRow {
  stream_id: string;
  revision: string;
  prev_hash: string;
  hash: string;
}

describe('migration to binary hashes', () => {
  let database: TestDatabase;
  let pool: Pool;
  let dataSource: DataSource;
  const key = randomBytes(32);
  let keyed: PostgresEventStore;
  let plain: PostgresEventStore;

  const migrate = async (direction: 'up' | 'down') => {
    const runner = dataSource.createQueryRunner();
    try {
      await new BinaryHashes1732200024000()[direction](runner);
    } finally {
      await runner.release();
    }
  };
  /** The hashes as text, whatever the columns' type: as stored (text) or as every reader selects them (bytea). */
  const hashes = async (asText: 'stored' | 'converted'): Promise<HashRow[]> => {
    const column = (c: string) => (asText === 'stored' ? c : `es_hash_text(${c}) as ${c}`);
    const { rows } = await pool.query<HashRow>(
      `select stream_id, revision::text, ${column('prev_hash')}, ${column('hash')} from es_events order by global_position`,
    );
    return rows;
  };
  const lastHashes = async (asText: 'stored' | 'converted') =>
    (
      await pool.query<{ stream_id: string; last_hash: string | null }>(
        `select stream_id, ${asText === 'stored' ? 'last_hash' : 'es_hash_text(last_hash) as last_hash'}
         from es_streams order by stream_id`,
      )
    ).rows;

  beforeAll(async () => {
    database = await createTestDatabase('binary_hashes');
    pool = createPgPool({ url: database.url, max: 4 });
    dataSource = await new DataSource({ type: 'postgres', url: database.url }).initialize();
    keyed = new PostgresEventStore(pool, { ...options, chain: { key } });
    plain = new PostgresEventStore(pool, options);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await pool.end();
    await database.drop();
  });

  it('converts hex hashes to bytes and back, and the chains still verify across it', async () => {
    await migrate('down');
    const unkeyed = newStream();
    const mixed = newStream();
    const empty = newStream();
    await plain.append(unkeyed, events(3));
    await plain.append(mixed, events(2));
    await keyed.append(mixed, events(2));
    await plain.setStreamMetadata(empty, { maxCount: 5 });
    const before = await hashes('stored');
    const lastBefore = await lastHashes('stored');
    expect(before.filter((r) => r.hash.startsWith(KEYED_PREFIX))).toHaveLength(2);
    expect(lastBefore.find((r) => r.stream_id === empty)?.last_hash).toBeNull();

    await migrate('up');
    const types = await pool.query<{ column_name: string; data_type: string }>(
      `select column_name, data_type from information_schema.columns
       where table_name in ('es_events', 'es_streams') and column_name like '%hash' order by 1`,
    );
    expect(types.rows.map((r) => r.data_type)).toEqual(['bytea', 'bytea', 'bytea']);
    const sizes = await pool.query<{ n: number; bytes: number }>(
      'select octet_length(hash) as bytes, count(*)::int as n from es_events group by 1 order by 1',
    );
    expect(sizes.rows).toEqual([
      { bytes: 32, n: 5 },
      { bytes: 33, n: 2 },
    ]);
    expect(await hashes('converted')).toEqual(before);
    expect(await lastHashes('converted')).toEqual(lastBefore);
    const read = [...(await keyed.readStream(unkeyed)), ...(await keyed.readStream(mixed))];
    expect(read.map((e) => [e.streamId, String(e.revision), e.prevHash, e.hash])).toEqual(
      before.map((r) => [r.stream_id, r.revision, r.prev_hash, r.hash]),
    );
    expect(await keyed.verifyStream(unkeyed)).toEqual({ ok: true, checked: 3 });
    expect(await keyed.verifyStream(mixed)).toEqual({ ok: true, checked: 4 });

    // The chains go on from the converted hashes, and survive the way back.
    await plain.append(unkeyed, events(1));
    await keyed.append(mixed, events(1));
    expect(await keyed.verifyStream(unkeyed)).toEqual({ ok: true, checked: 4 });
    expect(await keyed.verifyStream(mixed)).toEqual({ ok: true, checked: 5 });
    const after = await hashes('converted');
    const lastAfter = await lastHashes('converted');

    await migrate('down');
    expect(await hashes('stored')).toEqual(after);
    expect(await lastHashes('stored')).toEqual(lastAfter);
    await keyed.append(mixed, events(1));
    await migrate('up');
    expect(await keyed.verifyStream(mixed)).toEqual({ ok: true, checked: 6 });
  });
});

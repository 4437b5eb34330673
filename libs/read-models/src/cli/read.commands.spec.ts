import { streamIdOf } from '@parley/domain';
import { PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { conversationScript, createTestDatabase, snapshotFixture, toAppend, type TestDatabase } from '@parley/testing';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Pool } from 'pg';

const root = join(__dirname, '../../../..');
function parley(db: TestDatabase, ...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args],
      { cwd: root, env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: 'silent' } },
      (err, stdout) => resolve({ code: err ? Number(err.code) : 0, stdout }),
    );
  });
}

describe('parley events|state|verify|export and projections rebuild', () => {
  let db: TestDatabase;
  let pool: Pool;
  const id = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('read_cli');
    pool = createPgPool({ url: db.url, max: 2 });
    const store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 100 });
    await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture() })));
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('exports JSONL, folds the state, rebuilds the read models, and verify exits 1 naming a tampered revision', async () => {
    const exported = await parley(db, 'export', id);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { revision: number; hash: string });
    expect(lines.map((l) => l.revision)).toEqual([...Array(38).keys()]);
    const state = JSON.parse((await parley(db, 'state', id, '--at', '3')).stdout);
    expect(state).toMatchObject({ revision: 3, state: { status: 'RU' } });
    expect((await parley(db, 'projections', 'rebuild', 'conversations')).stdout).toContain('38 events');
    const { rows } = await pool.query('select status from rm_conversations where conversation_id = $1', [id]);
    expect(rows).toEqual([{ status: 'CO' }]);
    expect(await parley(db, 'verify', id)).toEqual({ code: 0, stdout: 'ok: 38 events verified\n' });
    await pool.query(
      `update es_events set data = jsonb_set(data, '{tokenCount}', '999') where stream_id = $1 and revision = 4`,
      [streamIdOf(id)],
    );
    const tampered = await parley(db, 'verify', id);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('first bad revision 4');
  }, 60_000);
});

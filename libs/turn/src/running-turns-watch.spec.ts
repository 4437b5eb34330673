import { loadConfig } from '@parley/config';
import { ConversationRepository, ConversationSignals, type ConversationEvent } from '@parley/conversation';
import { PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, snapshotFixture, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { RunningTurnsWatch, WATCH_MS } from './running-turns-watch';

const started = (id: string): ConversationEvent => ({
  type: 'ConversationStarted',
  data: {
    conversationId: id,
    agentCode: 'HELPDESK',
    actionCode: 'CHAT',
    owner: 'client-a',
    metadata: {},
    snapshot: snapshotFixture(),
  },
});

describe('RunningTurnsWatch', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let asked: number;

  beforeAll(async () => {
    db = await createTestDatabase('running_turns_watch');
    pool = createPgPool({ url: db.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
    const streamRevisions = store.streamRevisions.bind(store);
    store.streamRevisions = (ids) => {
      asked++;
      return streamRevisions(ids);
    };
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('asks for every watched conversation in one query per tick, and stops asking when none is watched', async () => {
    const repository = new ConversationRepository(store, new ConversationSignals(), loadConfig({}));
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await repository.append(id, await repository.load(id), [started(id)], { actor: 'a' });
    const watch = new RunningTurnsWatch(repository);
    const seen = new Map<string, bigint | null>();
    const offs = [...ids, randomUUID()].map((id) => watch.watch(id, (revision) => seen.set(id, revision)));
    asked = 0;

    await sleep(WATCH_MS * 4.5);

    expect(asked).toBeGreaterThanOrEqual(3);
    expect(asked).toBeLessThanOrEqual(5);
    expect([...seen.values()]).toEqual([0n, 0n, 0n, null]);
    await repository.append(
      ids[0],
      await repository.load(ids[0]),
      [{ type: 'ConversationTerminated', data: { reason: null } }],
      { actor: 'a' },
    );
    await sleep(WATCH_MS * 2);
    expect(seen.get(ids[0])).toBe(1n);

    for (const off of offs) off();
    asked = 0;
    await sleep(WATCH_MS * 2);
    expect(asked).toBe(0);
  });
});

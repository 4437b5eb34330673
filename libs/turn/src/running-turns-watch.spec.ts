import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunningTurnsWatch, WATCH_MS } from './running-turns-watch';
import { conversationRepository, conversationStarted, useTurnStore } from './turn.test-kit';

describe('RunningTurnsWatch', () => {
  const store = useTurnStore('running_turns_watch');
  let asked: number;

  beforeAll(() => {
    const streamRevisions = store().streamRevisions.bind(store());
    store().streamRevisions = (ids) => {
      asked++;
      return streamRevisions(ids);
    };
  });

  it('asks for every watched conversation in one query per tick, and stops asking when none is watched', async () => {
    const repository = conversationRepository(store());
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids)
      await repository.append(id, await repository.load(id), [conversationStarted(id)], { actor: 'a' });
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

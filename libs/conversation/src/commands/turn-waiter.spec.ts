import { loadConfig } from '@parley/config';
import type { ConversationState } from '@parley/domain';
import { until } from '@parley/testing';
import { ConversationSignals } from '../repository/conversation-signals';
import type { ConversationRepository } from '../repository/conversation.repository';
import { TurnWaiter } from './turn-waiter';

const running = { status: 'RU' } as ConversationState;
const completed = { status: 'CO' } as ConversationState;
const from = { state: running, revision: 3n, position: 'pg:1:3' };

/**
 * When a waiting command reads the stream: the repository counts its reads (the store's answer
 * is "nothing new"); the signals are the real in-process ones, without Redis.
 */
describe('TurnWaiter', () => {
  let signals: ConversationSignals;
  let reads: string[];
  let waiter: TurnWaiter;
  beforeEach(() => {
    signals = new ConversationSignals(null);
    reads = [];
    const repository = {
      eventsFrom: async (conversationId: string) => (reads.push(conversationId), []),
      remember: () => undefined,
    } as unknown as ConversationRepository;
    waiter = new TurnWaiter(repository, signals, loadConfig({ TURN_WAIT_POLL_MS: '10' }));
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** The append that ends the turn, as a run in this process signals it. */
  const endTurn = (conversationId: string, revision: bigint) =>
    signals.appended(conversationId, {
      types: ['ConversationCompleted'],
      state: completed,
      revision,
      position: `pg:1:${revision}`,
    });

  it('polls the stream every TURN_WAIT_POLL_MS for a turn that runs in another process', async () => {
    const watch = waiter.watch('elsewhere');
    const waited = watch.until(from, 60_000);
    await until(async () => reads.length >= 3, 10_000, 5);
    endTurn('elsewhere', 5n);
    await expect(waited).resolves.toMatchObject({ done: true });
    watch.close();
  });

  it('does not poll while the turn runs here, and ends with the append that ends it', async () => {
    const ran = signals.runningHere('here');
    const watch = waiter.watch('here');
    const waited = watch.until(from, 60_000);
    await sleep(200);
    expect(reads).toEqual([]);
    endTurn('here', 7n);
    await expect(waited).resolves.toEqual({ state: completed, position: 'pg:1:7', done: true });
    ran();
    expect(reads).toEqual([]);
    expect(signals.isRunningHere('here')).toBe(false);
    watch.close();
  });

  it('reads at once when the run here ends with the turn still running (handed on), then polls again', async () => {
    const ran = signals.runningHere('handed-on');
    const watch = waiter.watch('handed-on');
    const waited = watch.until(from, 60_000);
    await sleep(100);
    expect(reads).toEqual([]);
    ran();
    await until(async () => reads.length >= 3, 10_000, 5);
    endTurn('handed-on', 9n);
    await expect(waited).resolves.toMatchObject({ done: true });
    watch.close();
  });

  it('counts a conversation as running here until each of its runs has ended, and forgets it then', () => {
    const first = signals.runningHere('twice');
    const second = signals.runningHere('twice');
    first();
    first();
    expect(signals.isRunningHere('twice')).toBe(true);
    second();
    expect(signals.isRunningHere('twice')).toBe(false);
    expect(signals.runningCount).toBe(0);
  });
});

import { loadConfig } from '@parley/config';
import { ConversationSignals, TIMER_QUEUE, TURN_QUEUE, type TimerJob, type TurnJob } from '@parley/conversation';
import { BullMqJobQueue, connectedRedis, type Redis } from '@parley/platform';
import { until } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import type { TimerRunner } from './timer-runner';
import type { TurnRunner } from './turn-runner';
import { TurnWorker } from './turn-worker';

const REDIS_URL = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Which runs a worker announces on Redis, for commands waiting in another process: BullMQ and the
 * signals are real; the turn and timer runners stand in for the domain, recording what they ran.
 */
describe('TurnWorker announcements', () => {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const config = loadConfig({ PARLEY_PREFIX: prefix });
  let connections: Redis[];
  let queue: BullMqJobQueue;
  let worker: TurnWorker;
  let signals: ConversationSignals;
  let there: ConversationSignals;
  const ran: string[] = [];
  const heard: string[] = [];
  /** Runs that found their conversation marked as running here, and runs whose end this process heard. */
  const markedWhileRunning: string[] = [];
  const endedHere: string[] = [];
  const runner = (fail: (id: string) => boolean) => ({
    run: async (job: { conversationId: string }) => {
      ran.push(job.conversationId);
      if (signals.isRunningHere(job.conversationId)) markedWhileRunning.push(job.conversationId);
      if (fail(job.conversationId)) throw new Error('the run failed');
    },
  });

  beforeAll(async () => {
    connections = await Promise.all([connectedRedis(REDIS_URL), connectedRedis(REDIS_URL)]);
    queue = new BullMqJobQueue(connections[0], { prefix, attempts: 1 });
    signals = new ConversationSignals(connections[0], config);
    there = new ConversationSignals(connections[1], config);
    worker = new TurnWorker(
      queue,
      runner((id) => id.startsWith('failing')) as unknown as TurnRunner,
      runner((id) => id.startsWith('failing')) as unknown as TimerRunner,
      signals,
    );
    await worker.onApplicationBootstrap();
    for (const id of ['timer-1', 'failing-timer', 'turn-1', 'local-turn', 'sentinel']) {
      there.onAnnounced(id, () => heard.push(id));
      signals.onRanHere(id, () => endedHere.push(id));
    }
    await until(
      async () => Number(((await connections[1].pubsub('NUMSUB', `${prefix}:turn-announcements`)) as unknown[])[1]) > 0,
      5_000,
      10,
    );
  });

  afterAll(async () => {
    await queue.close();
    await there.onModuleDestroy();
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('announces a timer it fetched from the queue (a watchdog may end a turn another process waits on)', async () => {
    await queue.enqueue<TimerJob>(TIMER_QUEUE, 'timer-1', {
      kind: 'watchdog',
      conversationId: 'timer-1',
      turnNo: 1,
      revision: '3',
    });
    await until(() => heard.includes('timer-1'), 5_000, 10);
  });

  it('announces a fetched turn once its run returns, and neither a failed run nor a turn started here', async () => {
    await queue.enqueue<TimerJob>(TIMER_QUEUE, 'failing-timer', {
      kind: 'question-expiry',
      conversationId: 'failing-timer',
      toolCallId: 'call-1',
    });
    await queue.enqueue<TurnJob>(
      TURN_QUEUE,
      'local-turn',
      { conversationId: 'local-turn', revision: '1', turnNo: 1 },
      { preferLocal: true },
    );
    await queue.enqueue<TurnJob>(TURN_QUEUE, 'turn-1', { conversationId: 'turn-1', revision: '1', turnNo: 1 });
    await until(
      () => heard.includes('turn-1') && ran.includes('failing-timer') && ran.includes('local-turn'),
      5_000,
      10,
    );
    // Announcements from one connection arrive in order: any of the others would come before this.
    await signals.announce('sentinel');
    await until(() => heard.includes('sentinel'), 5_000, 10);
    expect(heard).toEqual(['timer-1', 'turn-1', 'sentinel']);
  });

  it('marks a conversation as running here while any run of it goes on, and tells this process when it ends, failed too', async () => {
    await until(() => ['turn-1', 'local-turn', 'failing-timer'].every((id) => endedHere.includes(id)), 5_000, 10);
    expect(markedWhileRunning).toEqual(expect.arrayContaining(['timer-1', 'failing-timer', 'turn-1', 'local-turn']));
    for (const id of ['timer-1', 'failing-timer', 'turn-1', 'local-turn'])
      expect(signals.isRunningHere(id)).toBe(false);
    expect(signals.runningCount).toBe(0);
  });
});

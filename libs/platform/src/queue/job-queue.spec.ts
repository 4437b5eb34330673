import { loadConfig } from '@parley/config';
import { until } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import { InProcessJobQueue } from './in-process-job-queue';
import type { JobQueue } from './job-queue.port';
import { createJobQueue } from './queue.module';

/** A short grace, so that the shutdown cases need not wait 10 s. */
const GRACE_MS = 300;

describe.each([
  ['in-process', () => new InProcessJobQueue(5, GRACE_MS)],
  [
    'BullMQ on Redis',
    () =>
      createJobQueue(
        loadConfig({
          REDIS_URL: 'redis://127.0.0.1:6379',
          PARLEY_PREFIX: `t${randomBytes(4).toString('hex')}`,
          SHUTDOWN_GRACE_MS: String(GRACE_MS),
        }),
      ),
  ],
])('job queue (%s)', (_name, make: () => JobQueue) => {
  let queue: JobQueue;
  beforeEach(() => (queue = make()));
  afterEach(() => queue.close());

  it.each([false, true])(
    'closes once a running job ends within the grace, without aborting it (preferLocal %s)',
    async (preferLocal) => {
      let finished = false;
      let aborted = false;
      await queue.process(
        'turns',
        async (_d, job) => {
          job.signal.addEventListener('abort', () => (aborted = true));
          await new Promise((r) => setTimeout(r, GRACE_MS / 3));
          finished = true;
        },
        { concurrency: 1 },
      );
      await queue.enqueue('turns', 'turn:g:1', {}, { preferLocal });
      await until(() => queue.depth('turns').then((d) => d === 0), 5000, 10);
      await new Promise((r) => setTimeout(r, 20));
      await queue.close();
      expect({ finished, aborted }).toEqual({ finished: true, aborted: false });
    },
  );

  it.each([false, true])(
    'aborts a job still running at the end of the grace and closes once it has stopped (preferLocal %s)',
    async (preferLocal) => {
      let started = false;
      let abortedAt = 0;
      await queue.process(
        'turns',
        (_d, job) =>
          new Promise<void>((_resolve, reject) => {
            started = true;
            job.signal.addEventListener('abort', () => {
              abortedAt = Date.now();
              reject(job.signal.reason as Error);
            });
          }),
        { concurrency: 1 },
      );
      await queue.enqueue('turns', 'turn:h:1', {}, { preferLocal });
      await until(() => started, 5000, 10);
      const closing = Date.now();
      await queue.close();
      // Timers may fire a millisecond early by Date.now()'s rounding.
      expect(abortedAt - closing).toBeGreaterThanOrEqual(GRACE_MS - 2);
      expect(Date.now() - closing).toBeLessThan(GRACE_MS + 3000);
    },
  );

  it('runs an enqueued job with its data', async () => {
    const seen: unknown[] = [];
    await queue.process<{ n: number }>('turns', async (data) => void seen.push(data.n), { concurrency: 2 });
    await queue.enqueue('turns', 'turn:a:1', { n: 1 });
    await until(() => seen.length === 1, 5000, 20);
    expect(seen).toEqual([1]);
  });

  it('runs a job id once while it is pending', async () => {
    const seen: string[] = [];
    await queue.enqueue('turns', 'turn:b:1', { n: 1 }, { delayMs: 200 });
    await queue.enqueue('turns', 'turn:b:1', { n: 2 }, { delayMs: 200 });
    await queue.process<{ n: number }>('turns', async (_d, job) => void seen.push(job.id), { concurrency: 2 });
    await until(() => seen.length >= 1, 5000, 20);
    await new Promise((r) => setTimeout(r, 400));
    expect(seen).toHaveLength(1);
  });

  it('delays a job', async () => {
    const ranAt: number[] = [];
    await queue.process('timers', async () => void ranAt.push(Date.now()), { concurrency: 1 });
    const enqueuedAt = Date.now();
    await queue.enqueue('timers', 'expire:c:1', {}, { delayMs: 300 });
    await until(() => ranAt.length === 1, 5000, 20);
    expect(ranAt[0] - enqueuedAt).toBeGreaterThanOrEqual(280);
  });

  it('retries a failed job with a higher attempt number, telling each run how many it gets', async () => {
    const attempts: string[] = [];
    await queue.process(
      'turns',
      async (_d, job) => {
        attempts.push(`${job.attempt}/${job.maxAttempts}`);
        if (job.attempt === 1) throw new Error('first run fails');
      },
      { concurrency: 1 },
    );
    await queue.enqueue('turns', 'turn:d:1', {});
    await until(() => attempts.length === 2, 5000, 20);
    expect(attempts).toEqual(['1/5', '2/5']);
  });

  it('runs a job started here (preferLocal) with the same attempt count', async () => {
    const seen: string[] = [];
    await queue.process('turns', async (_d, job) => void seen.push(`${job.attempt}/${job.maxAttempts}`), {
      concurrency: 1,
    });
    await queue.enqueue('turns', 'turn:e:1', {}, { preferLocal: true });
    await until(() => seen.length === 1, 5000, 20);
    expect(seen).toEqual(['1/5']);
  });
});

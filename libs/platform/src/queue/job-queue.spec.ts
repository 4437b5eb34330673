import { loadConfig } from '@parley/config';
import { until } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import { InProcessJobQueue } from './in-process-job-queue';
import type { JobQueue } from './job-queue.port';
import { createJobQueue } from './queue.module';

describe.each([
  ['in-process', () => new InProcessJobQueue()],
  [
    'BullMQ on Redis',
    () =>
      createJobQueue(
        loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', PARLEY_PREFIX: `t${randomBytes(4).toString('hex')}` }),
      ),
  ],
])('job queue (%s)', (_name, make: () => JobQueue) => {
  let queue: JobQueue;
  beforeEach(() => (queue = make()));
  afterEach(() => queue.close());

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

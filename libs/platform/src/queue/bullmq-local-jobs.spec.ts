import { until } from '@parley/testing';
import { Queue } from 'bullmq';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BullMqJobQueue } from './bullmq-job-queue';

const REDIS_URL = 'redis://127.0.0.1:6379';
const LOCK_MS = 600;

/**
 * `preferLocal` on BullMQ: two queue instances on one prefix stand for two processes; `here`
 * enqueues, `there` is another worker that must take a job only when `here` cannot finish it.
 */
describe('BullMQ job queue: jobs started in the process that enqueues them', () => {
  let prefix: string;
  let connections: Redis[];
  let inspect: Queue;
  const open = () => {
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    connections.push(connection);
    return new BullMqJobQueue(connection, { prefix, lockDurationMs: LOCK_MS, stalledIntervalMs: LOCK_MS / 2 });
  };
  const stateOf = async (id: string) => (await inspect.getJob(id))?.getState() ?? 'gone';
  /** A handler that records each job id and holds the jobs `holds` picks until `release()`. */
  const holding = (holds: (id: string) => boolean = () => true) => {
    const ran: string[] = [];
    const waiting: (() => void)[] = [];
    return {
      ran,
      release: () => waiting.splice(0).forEach((resume) => resume()),
      handler: async (_data: unknown, job: { id: string }) => {
        ran.push(job.id);
        if (holds(job.id)) await new Promise<void>((resume) => waiting.push(resume));
      },
    };
  };

  beforeEach(() => {
    prefix = `t${randomBytes(4).toString('hex')}`;
    connections = [];
    inspect = new Queue('turns', { connection: { url: REDIS_URL }, prefix });
  });
  afterEach(async () => {
    await inspect.close();
    for (const c of connections) c.disconnect();
  });

  it('runs the job here at once, holds the stored copy back while it runs, and removes it after', async () => {
    const here = open();
    const there = open();
    const held = holding();
    const ranThere: string[] = [];
    await here.process('turns', held.handler, { concurrency: 4 });
    await there.process('turns', async (_d, job) => void ranThere.push(job.id), { concurrency: 4 });

    await here.enqueue('turns', 'turn:a:1', { n: 1 }, { preferLocal: true });

    expect(held.ran).toEqual(['turn.a.1']);
    expect(await stateOf('turn.a.1')).toBe('delayed');
    // Longer than the lock: the lease is renewed, so the other worker never gets the job.
    await sleep(LOCK_MS * 2.5);
    expect(ranThere).toEqual([]);
    held.release();
    await until(async () => (await stateOf('turn.a.1')) === 'gone', 8000, 20);
    await sleep(LOCK_MS);
    expect(ranThere).toEqual([]);
    await Promise.all([here.close(), there.close()]);
  });

  it('stores a job running here again as its lease when Redis lost it, so no other worker runs it meanwhile', async () => {
    const here = open();
    const there = open();
    let first = true;
    // Only the run started here is held: a second run, wherever it lands, ends at once.
    const held = holding(() => [first, (first = false)][0]);
    const ranThere: string[] = [];
    await here.process('turns', held.handler, { concurrency: 4 });
    await there.process('turns', async (_d, job) => void ranThere.push(job.id), { concurrency: 4 });
    await here.enqueue('turns', 'turn:l:1', { n: 1 }, { preferLocal: true });
    expect(held.ran).toEqual(['turn.l.1']);

    // Redis loses the lease; the turn dispatcher stores the job again, as for any lost job.
    await (await inspect.getJob('turn.l.1'))!.remove();
    await here.enqueue('turns', 'turn:l:1', { n: 1 });

    expect(await stateOf('turn.l.1')).toBe('delayed');
    await sleep(LOCK_MS * 2.5);
    expect(ranThere).toEqual([]);
    held.release();
    await until(async () => (await stateOf('turn.l.1')) === 'gone', 8000, 20);
    expect(held.ran).toEqual(['turn.l.1']);
    expect(ranThere).toEqual([]);
    await Promise.all([here.close(), there.close()]);
  });

  it('hands a job that failed here to the queue, where a worker retries it', async () => {
    const here = open();
    const there = open();
    const attempts: string[] = [];
    await here.process(
      'turns',
      async (_d, job) => {
        attempts.push(`here:${job.attempt}:${job.local ? 'local' : 'fetched'}`);
        throw new Error('provider down');
      },
      { concurrency: 4 },
    );
    await there.process(
      'turns',
      async (_d, job) => void attempts.push(`there:${job.attempt}:${job.local ? 'local' : 'fetched'}`),
      { concurrency: 4 },
    );

    await here.enqueue('turns', 'turn:b:1', {}, { preferLocal: true });

    await until(() => attempts.length >= 2, 8000, 20);
    expect(attempts[0]).toBe('here:1:local');
    expect(attempts).toContain('there:1:fetched');
    await Promise.all([here.close(), there.close()]);
  });

  it.each([true, false])(
    'hands a job still running when its process shuts down to another worker at once, long before its lease ends (preferLocal %s)',
    async (preferLocal) => {
      const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
      connection.on('error', () => undefined);
      connections.push(connection);
      // A lease of a minute: only the abort at the end of the grace can hand the job on in time.
      const here = new BullMqJobQueue(connection, { prefix, lockDurationMs: 60_000, shutdownGraceMs: 200 });
      const there = open();
      const runs: string[] = [];
      await here.process(
        'turns',
        (_d, job) =>
          new Promise<void>((_resolve, reject) => {
            runs.push(`here:${job.local ? 'local' : 'fetched'}`);
            job.signal.addEventListener('abort', () => reject(job.signal.reason as Error));
          }),
        { concurrency: 4 },
      );
      await here.enqueue('turns', 'turn:s:1', {}, { preferLocal });
      await until(() => runs.length === 1, 5000, 10);
      // The other worker starts only now, so that the first run is here's.
      await there.process('turns', async (_d, job) => void runs.push(`there:${job.attempt}`), { concurrency: 4 });
      await here.close();
      await until(() => runs.length === 2, 5000, 10);
      expect(runs[0]).toBe(`here:${preferLocal ? 'local' : 'fetched'}`);
      expect(runs[1]).toMatch(/^there:/);
      await until(
        async () => (await stateOf('turn.s.1')) === 'completed' || (await stateOf('turn.s.1')) === 'gone',
        5000,
        20,
      );
      await there.close();
    },
  );

  it('lets another worker take the job once the process that started it dies (SIGKILL)', async () => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        './tools/register.js',
        'libs/platform/src/queue/testing/local-job-child.ts',
        prefix,
        String(LOCK_MS),
        'turn:c:1',
      ],
      { cwd: join(__dirname, '../../../..'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d) => String(d).includes('started') && resolve());
      child.once('exit', (code) => reject(new Error(`the child exited (${code})`)));
    });
    const state = await stateOf('turn.c.1');
    child.kill('SIGKILL');
    expect(state).toBe('delayed');
    const there = open();
    const ranThere: string[] = [];
    await there.process('turns', async (_d, job) => void ranThere.push(job.id), { concurrency: 4 });

    await until(() => ranThere.length === 1, LOCK_MS * 20, 20);
    expect(ranThere).toEqual(['turn.c.1']);
    await there.close();
  });

  it('enqueues as usual when no handler runs here, or all of them are busy', async () => {
    const here = open();
    const there = open();
    const ranThere: string[] = [];
    await there.process('turns', async (_d, job) => void ranThere.push(job.id), { concurrency: 4 });
    await here.enqueue('turns', 'turn:d:1', {}, { preferLocal: true });
    await until(() => ranThere.length === 1, 8000, 20);

    const busy = open();
    const held = holding((id) => id === 'turn.d.2');
    await busy.process('turns', held.handler, { concurrency: 1 });
    await busy.enqueue('turns', 'turn:d:2', {}, { preferLocal: true });
    await busy.enqueue('turns', 'turn:d:3', {}, { preferLocal: true });
    // d.2 holds the one local slot, so d.3 went to the queue like any job, for whichever worker.
    expect(held.ran).toEqual(['turn.d.2']);
    expect(await stateOf('turn.d.2')).toBe('delayed');
    await until(() => ranThere.includes('turn.d.3') || held.ran.includes('turn.d.3'), 8000, 20);
    held.release();
    await Promise.all([here.close(), there.close(), busy.close()]);
  });

  it('shares one concurrency between the jobs started here and the jobs its worker fetches', async () => {
    const here = open();
    let running = 0;
    let most = 0;
    const ran: string[] = [];
    const releases: (() => void)[] = [];
    await here.process(
      'turns',
      async (_d, job) => {
        ran.push(job.id);
        most = Math.max(most, ++running);
        await new Promise<void>((r) => releases.push(r));
        running--;
      },
      { concurrency: 3 },
    );
    const releaseAll = async () => {
      while (ran.length < 7 || running > 0) {
        releases.splice(0).forEach((release) => release());
        await sleep(20);
      }
    };
    try {
      // Three started here fill the handler; the queued ones wait for the worker's one slot.
      for (const n of [1, 2, 3]) await here.enqueue('turns', `turn:e:${n}`, {}, { preferLocal: true });
      for (const n of [4, 5, 6]) await here.enqueue('turns', `turn:e:${n}`, {});
      await until(() => ran.length === 4, 8000, 20);
      await sleep(LOCK_MS);
      expect(ran).toHaveLength(4);
      expect(most).toBe(4);
      // A job that finds the handler full is queued, not started here beside the worker's.
      await here.enqueue('turns', 'turn:e:7', {}, { preferLocal: true });
      expect(ran).toHaveLength(4);

      await releaseAll();
      expect(new Set(ran)).toEqual(new Set([1, 2, 3, 4, 5, 6, 7].map((n) => `turn.e.${n}`)));
      expect(most).toBeLessThanOrEqual(4);
    } finally {
      await until(() => ran.length >= 6, 8000, 20).catch(() => undefined);
      await here.enqueue('turns', 'turn:e:7', {}, { preferLocal: true });
      await releaseAll();
      await here.close();
    }
  });
});

import { type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { drainJobs } from './drain';
import type { EnqueueOptions, JobHandler, JobQueue, ProcessOptions } from './job-queue.port';

export interface BullMqOptions {
  /** Key prefix in Redis: `<prefix>` (tests use a unique one per file). */
  prefix: string;
  /** How long a worker may hold a job before it counts as stalled (a killed worker's jobs come back after this). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  attempts?: number;
  /** How long close() lets running jobs go on before it aborts them (default 10 s). */
  shutdownGraceMs?: number;
}

/** A queue's handler in this process, for jobs started here (EnqueueOptions.preferLocal). */
interface LocalHandler {
  handler: JobHandler<unknown>;
  concurrency: number;
  /** Job ids running here outside the BullMQ worker, with their completion. */
  running: Map<string, Promise<void>>;
  /** Jobs the BullMQ worker of this handler is running. */
  fetched: number;
  worker?: Worker;
}

/**
 * The production queue: BullMQ on Redis. Job ids dedup; stalled jobs of a dead worker are retried.
 *
 * A job enqueued with `preferLocal` while a handler of its queue runs here is started here at
 * once (no round trip through Redis to a worker), and stored as a delayed job whose delay is a
 * lease: renewed every half lock while the job runs, removed when it succeeds, promoted to the
 * waiting jobs (retried as usual) when it fails. If this process dies, the lease runs out and any
 * worker takes the job, as it would a stalled one. Jobs started here and jobs the handler's
 * BullMQ worker fetches share the handler's concurrency: one starts here only while the two
 * together are under it, and the worker fetches only up to what the ones started here leave
 * (at least one, so the queue never stalls behind them).
 */
export class BullMqJobQueue implements JobQueue {
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private readonly workerConnections: Redis[] = [];
  private readonly local = new Map<string, LocalHandler>();
  /** Aborted once close() has waited out the grace: every job's JobContext.signal. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly connection: Redis,
    private readonly options: BullMqOptions,
  ) {}

  async enqueue<T>(queue: string, jobId: string, data: T, options: EnqueueOptions = {}): Promise<void> {
    const id = safeId(jobId);
    if (this.local.get(queue)?.running.has(id)) {
      // Running here already. Stored again as its lease (a no-op while Redis holds the lease): a
      // Redis that lost its data would otherwise hand the job to a worker beside this run.
      await this.add(queue, id, data, this.lockMs);
      return;
    }
    const here = options.preferLocal ? this.local.get(queue) : undefined;
    if (here && here.running.size + here.fetched < here.concurrency && !options.delayMs) {
      const stored = this.add(queue, id, data, this.lockMs);
      this.runHere(here, id, data, stored);
      await stored;
      return;
    }
    await this.add(queue, id, data, options.delayMs);
  }

  private add<T>(queue: string, id: string, data: T, delayMs: number | undefined): Promise<Job> {
    return this.queue(queue).add(queue, data, {
      jobId: id,
      delay: delayMs,
      attempts: this.options.attempts ?? 5,
      backoff: { type: 'exponential', delay: 200 },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  private get lockMs(): number {
    return this.options.lockDurationMs ?? 30_000;
  }

  private runHere(here: LocalHandler, id: string, data: unknown, stored: Promise<Job>): void {
    const renew = setInterval(() => {
      void stored.then((job) => job.changeDelay(this.lockMs)).catch(() => undefined);
    }, this.lockMs / 2);
    renew.unref();
    const run = here
      .handler(data, {
        id,
        attempt: 1,
        maxAttempts: this.options.attempts ?? 5,
        local: true,
        signal: this.stopping.signal,
      })
      .then(
        // Done here: drop the stored copy. If it is gone or locked already, a lease ran out and a
        // worker took it; that run finds the job's work done (turns check their state first).
        () => stored.then((job) => job.remove()).catch(() => undefined),
        // Failed here: the stored copy becomes due now and is retried like any job.
        () => stored.then((job) => job.promote()).catch(() => undefined),
      )
      .finally(() => {
        clearInterval(renew);
        here.running.delete(id);
        this.shareConcurrency(here);
      });
    here.running.set(id, run);
    this.shareConcurrency(here);
  }

  /** The worker fetches only what the jobs started here leave of the handler's concurrency. */
  private shareConcurrency(here: LocalHandler): void {
    if (here.worker) here.worker.concurrency = Math.max(1, here.concurrency - here.running.size);
  }

  async process<T>(queue: string, handler: JobHandler<T>, options: ProcessOptions): Promise<void> {
    const here: LocalHandler = {
      handler: handler as JobHandler<unknown>,
      concurrency: options.concurrency,
      running: new Map(),
      fetched: 0,
    };
    this.local.set(queue, here);
    // BullMQ never closes a connection it was given: close() quits these.
    const connection = this.connection.duplicate({ maxRetriesPerRequest: null });
    this.workerConnections.push(connection);
    const worker = new Worker<T>(
      queue,
      async (job) => {
        here.fetched++;
        try {
          await handler(job.data, {
            id: job.id ?? '',
            attempt: job.attemptsMade + 1,
            maxAttempts: job.opts.attempts ?? 1,
            local: false,
            signal: this.stopping.signal,
          });
        } finally {
          here.fetched--;
        }
      },
      {
        connection,
        prefix: this.options.prefix,
        concurrency: options.concurrency,
        lockDuration: this.lockMs,
        stalledInterval: this.options.stalledIntervalMs ?? 30_000,
        maxStalledCount: 3,
      },
    );
    worker.on('error', () => undefined);
    here.worker = worker;
    this.workers.push(worker);
    await worker.waitUntilReady();
  }

  async depth(queue: string): Promise<number> {
    const counts = await this.queue(queue).getJobCounts('waiting', 'delayed', 'prioritized');
    return (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);
  }

  /**
   * Takes no more jobs and waits for the running ones; past the grace, aborts them, so that a
   * job started here is promoted (due at once) and a fetched one fails into its retry, for any
   * worker to take. One that ignores the abort is left to its lease or stalled-job check.
   */
  async close(): Promise<void> {
    const started = [...this.local.values()].flatMap((h) => [...h.running.values()]);
    this.local.clear();
    const settled = Promise.all([...started, ...this.workers.map((w) => w.close())]);
    if (!(await drainJobs(settled, this.options.shutdownGraceMs ?? 10_000, this.stopping)))
      await Promise.all(this.workers.map((w) => w.close(true)));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await Promise.all(this.workerConnections.map((c) => c.quit().catch(() => c.disconnect())));
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.options.prefix });
      q.on('error', () => undefined);
      this.queues.set(name, q);
    }
    return q;
  }
}

/** BullMQ reserves ':' in custom job ids. */
const safeId = (id: string) => id.replace(/:/g, '.');

import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EnqueueOptions, JobHandler, JobQueue, ProcessOptions } from './job-queue.port';

export interface BullMqOptions {
  /** Key prefix in Redis: `<prefix>` (tests use a unique one per file). */
  prefix: string;
  /** How long a worker may hold a job before it counts as stalled (a killed worker's jobs come back after this). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  attempts?: number;
}

/** The production queue: BullMQ on Redis. Job ids dedup; stalled jobs of a dead worker are retried. */
export class BullMqJobQueue implements JobQueue {
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private readonly workerConnections: Redis[] = [];

  constructor(
    private readonly connection: Redis,
    private readonly options: BullMqOptions,
  ) {}

  async enqueue<T>(queue: string, jobId: string, data: T, options: EnqueueOptions = {}): Promise<void> {
    await this.queue(queue).add(queue, data, {
      jobId: safeId(jobId),
      delay: options.delayMs,
      attempts: this.options.attempts ?? 5,
      backoff: { type: 'exponential', delay: 200 },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  async process<T>(queue: string, handler: JobHandler<T>, options: ProcessOptions): Promise<void> {
    // BullMQ never closes a connection it was given: close() quits these.
    const connection = this.connection.duplicate({ maxRetriesPerRequest: null });
    this.workerConnections.push(connection);
    const worker = new Worker<T>(
      queue,
      (job) => handler(job.data, { id: job.id ?? '', attempt: job.attemptsMade + 1 }),
      {
        connection,
        prefix: this.options.prefix,
        concurrency: options.concurrency,
        lockDuration: this.options.lockDurationMs ?? 30_000,
        stalledInterval: this.options.stalledIntervalMs ?? 30_000,
        maxStalledCount: 3,
      },
    );
    worker.on('error', () => undefined);
    this.workers.push(worker);
    await worker.waitUntilReady();
  }

  async depth(queue: string): Promise<number> {
    const counts = await this.queue(queue).getJobCounts('waiting', 'delayed', 'prioritized');
    return (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
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

import { drainJobs } from './drain';
import type { EnqueueOptions, JobHandler, JobQueue, ProcessOptions } from './job-queue.port';

interface Pending {
  id: string;
  data: unknown;
  attempt: number;
}

/**
 * The embedded default: jobs live in this process only (no Redis). A failed job is retried
 * with a short backoff; jobs are lost if the process dies, which is why production uses BullMQ.
 */
export class InProcessJobQueue implements JobQueue {
  private readonly queues = new Map<
    string,
    { ready: Pending[]; known: Set<string>; running: number; timers: Set<NodeJS.Timeout> }
  >();
  private readonly handlers = new Map<string, { handler: JobHandler<unknown>; concurrency: number }>();
  private closed = false;
  /** The runs under way, settled or not: close() waits for them. */
  private readonly running = new Set<Promise<void>>();
  /** Aborted once close() has waited out the grace: every job's JobContext.signal. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly maxAttempts = 5,
    private readonly shutdownGraceMs = 10_000,
  ) {}

  async enqueue<T>(queue: string, jobId: string, data: T, options: EnqueueOptions = {}): Promise<void> {
    const q = this.queue(queue);
    if (this.closed || q.known.has(jobId)) return;
    q.known.add(jobId);
    const job = { id: jobId, data, attempt: 1 };
    if (options.delayMs && options.delayMs > 0) this.later(queue, job, options.delayMs);
    else q.ready.push(job);
    this.pump(queue);
  }

  async process<T>(queue: string, handler: JobHandler<T>, options: ProcessOptions): Promise<void> {
    this.handlers.set(queue, { handler: handler as JobHandler<unknown>, concurrency: options.concurrency });
    this.pump(queue);
  }

  async depth(queue: string): Promise<number> {
    const q = this.queue(queue);
    return q.ready.length + q.timers.size;
  }

  /**
   * Takes no more jobs and waits for the running ones; past the grace, aborts them. What this
   * queue held is lost with the process either way: the turn dispatcher of the next one stores
   * the jobs of the turns still running again.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.queues.values()) for (const t of q.timers) clearTimeout(t);
    this.queues.clear();
    await drainJobs(Promise.all(this.running), this.shutdownGraceMs, this.stopping);
  }

  private queue(name: string) {
    let q = this.queues.get(name);
    if (!q) {
      q = { ready: [], known: new Set(), running: 0, timers: new Set() };
      this.queues.set(name, q);
    }
    return q;
  }

  private later(queue: string, job: Pending, delayMs: number): void {
    const q = this.queue(queue);
    const timer = setTimeout(() => {
      q.timers.delete(timer);
      q.ready.push(job);
      this.pump(queue);
    }, delayMs);
    timer.unref();
    q.timers.add(timer);
  }

  private pump(queue: string): void {
    const entry = this.handlers.get(queue);
    const q = this.queue(queue);
    if (!entry || this.closed) return;
    while (q.running < entry.concurrency && q.ready.length > 0) {
      const job = q.ready.shift()!;
      q.running++;
      const run = entry
        .handler(job.data, {
          id: job.id,
          attempt: job.attempt,
          maxAttempts: this.maxAttempts,
          local: true,
          signal: this.stopping.signal,
        })
        .then(
          () => void q.known.delete(job.id),
          () => {
            if (job.attempt >= this.maxAttempts) q.known.delete(job.id);
            else if (!this.closed) this.later(queue, { ...job, attempt: job.attempt + 1 }, 100 * 2 ** job.attempt);
          },
        )
        .finally(() => {
          q.running--;
          this.running.delete(run);
          this.pump(queue);
        });
      this.running.add(run);
    }
  }
}

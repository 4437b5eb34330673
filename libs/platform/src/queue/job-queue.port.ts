/**
 * Durable background jobs: the turn queue and timers (question expiry, stuck watchdog).
 * Two adapters: BullMQ on Redis, and an in-process queue when Redis is not configured.
 * Delivery is at-least-once; a job id enqueued twice while the first is pending runs once.
 */
export interface JobContext {
  id: string;
  /** 1 on the first run; higher when a failed or stalled job runs again. */
  attempt: number;
  /** Runs the job gets in all, when the queue knows it: a failure on the last one is final. */
  maxAttempts?: number;
  /**
   * True when the process that enqueued the job runs it (in-process queue, or `preferLocal`);
   * false when a worker fetched it from the queue, so whoever enqueued it may be elsewhere.
   */
  local: boolean;
  /**
   * Aborted when the process shuts down and the job has not finished within its grace
   * (SHUTDOWN_GRACE_MS). The handler should stop and reject: the job is then run again, by
   * another worker or by this one once it is back, rather than counted as done.
   */
  signal: AbortSignal;
}

export type JobHandler<T> = (data: T, job: JobContext) => Promise<void>;

export interface EnqueueOptions {
  delayMs?: number;
  /**
   * Start the job in this process at once when a handler of its queue runs here and has room,
   * instead of waiting for a worker to fetch it. The queue still holds a durable copy, due only
   * if this process dies or the job fails here: delivery stays at-least-once.
   */
  preferLocal?: boolean;
}

export interface ProcessOptions {
  concurrency: number;
}

export interface JobQueue {
  enqueue<T>(queue: string, jobId: string, data: T, options?: EnqueueOptions): Promise<void>;
  /** Starts consuming `queue` in this process. */
  process<T>(queue: string, handler: JobHandler<T>, options: ProcessOptions): Promise<void>;
  /** Jobs waiting or delayed (for the queue_depth metric). */
  depth(queue: string): Promise<number>;
  /**
   * Stops taking jobs, lets the running ones finish within the grace, then aborts them (their
   * JobContext.signal) and hands them on; resolves once they have settled, or at the latest
   * AFTER_ABORT_MS after the abort (drainJobs, drain.ts).
   */
  close(): Promise<void>;
}

export const JOB_QUEUE = Symbol('parley.job-queue');

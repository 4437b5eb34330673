/** How long a queue's close() waits for aborted jobs to settle before it lets them go. */
export const AFTER_ABORT_MS = 5_000;

/** Whether `work` settles within `ms`; a rejection counts as settled (whoever awaits `work` sees it). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A queue's shutdown of its running jobs: waits for `running` within `graceMs`; past it aborts
 * `stopping` (every job's JobContext.signal) and waits AFTER_ABORT_MS more. Resolves whether the
 * jobs settled; those that did not are left to the queue's own way of handing them on.
 */
export async function drainJobs(
  running: Promise<unknown>,
  graceMs: number,
  stopping: AbortController,
): Promise<boolean> {
  if (await settlesWithin(running, graceMs)) return true;
  stopping.abort(new Error('the process is shutting down'));
  return settlesWithin(running, AFTER_ABORT_MS);
}

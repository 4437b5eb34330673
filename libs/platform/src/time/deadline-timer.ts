/** A signal that aborts at a deadline, and the means to stop its timer once the work it bounds is over. */
export interface DeadlineTimer {
  readonly signal: AbortSignal;
  /** Stops the timer (the signal then never aborts): what it bounded has ended. */
  clear(): void;
}

/**
 * A signal that aborts once the wall clock (`Date.now()`) reaches `deadline` (epoch ms), never
 * before. `AbortSignal.timeout` counts on the event loop's own millisecond clock, which can end a
 * timeout a millisecond short of `Date.now()`: a turn that checks its deadline by `Date.now()` right
 * after a step timed out would still see time left and start another model call. Aborts with a
 * `TimeoutError`, as `AbortSignal.timeout` does; its timer holds no process open, and `clear()`
 * ends it with the work, so that a turn's long deadline keeps nothing alive after its call.
 */
export function deadlineTimer(deadline: number): DeadlineTimer {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    const left = deadline - Date.now();
    if (left > 0) timer = setTimeout(check, left).unref();
    else controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  };
  check();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** `deadlineTimer` for a span of `ms` from now: aborts once `ms` of wall-clock time have passed. */
export const timeoutTimer = (ms: number): DeadlineTimer => deadlineTimer(Date.now() + ms);

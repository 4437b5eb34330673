/**
 * A signal that aborts once the wall clock (`Date.now()`) reaches `deadline` (epoch ms), never
 * before. `AbortSignal.timeout` counts on the event loop's own millisecond clock, which can end a
 * timeout a millisecond short of `Date.now()`: a turn that checks its deadline by `Date.now()` right
 * after a step timed out would still see time left and start another model call. Aborts with a
 * `TimeoutError`, as `AbortSignal.timeout` does; its timer holds no process open.
 */
export function deadlineSignal(deadline: number): AbortSignal {
  const controller = new AbortController();
  const check = (): void => {
    const left = deadline - Date.now();
    if (left > 0) setTimeout(check, left).unref();
    else controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  };
  check();
  return controller.signal;
}

/** `deadlineSignal` for a span of `ms` from now: aborts once `ms` of wall-clock time have passed. */
export const timeoutSignal = (ms: number): AbortSignal => deadlineSignal(Date.now() + ms);

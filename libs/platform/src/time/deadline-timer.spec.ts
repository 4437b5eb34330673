import { deadlineTimer, timeoutTimer } from './deadline-timer';

describe('deadlineTimer: a signal that aborts at a wall-clock deadline, never before', () => {
  afterEach(() => jest.useRealTimers());

  it('waits on when its timer ends before Date.now() reaches the deadline, and aborts once it does', () => {
    jest.useFakeTimers({ now: 10_000 });
    const { signal } = deadlineTimer(10_100);
    // The event loop's clock runs a millisecond ahead of the wall clock: the timer ends at 10_099.
    jest.setSystemTime(9_999);
    jest.advanceTimersByTime(100);
    expect(Date.now()).toBe(10_099);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('is aborted at once for a deadline already past', () => {
    expect(deadlineTimer(Date.now() - 1).signal.aborted).toBe(true);
    expect(deadlineTimer(Date.now()).signal.aborted).toBe(true);
  });

  it('counts a span from now (timeoutTimer)', async () => {
    const started = Date.now();
    const { signal } = timeoutTimer(30);
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(30);
  });

  it('never aborts once cleared, and keeps no timer pending', () => {
    jest.useFakeTimers({ now: 0 });
    const timer = deadlineTimer(1_000);
    expect(jest.getTimerCount()).toBe(1);
    timer.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(2_000);
    expect(timer.signal.aborted).toBe(false);
  });
});

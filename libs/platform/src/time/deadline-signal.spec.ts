import { deadlineSignal, timeoutSignal } from './deadline-signal';

describe('deadlineSignal: a signal that aborts at a wall-clock deadline, never before', () => {
  afterEach(() => jest.useRealTimers());

  it('waits on when its timer ends before Date.now() reaches the deadline, and aborts once it does', () => {
    jest.useFakeTimers({ now: 10_000 });
    const signal = deadlineSignal(10_100);
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
    expect(deadlineSignal(Date.now() - 1).aborted).toBe(true);
    expect(deadlineSignal(Date.now()).aborted).toBe(true);
  });

  it('counts a span from now (timeoutSignal)', async () => {
    const started = Date.now();
    const signal = timeoutSignal(30);
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(30);
  });
});

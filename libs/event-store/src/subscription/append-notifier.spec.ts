import { AppendNotifier, onLocalAppend, wakeAllSubscribers } from './append-notifier';

const settled = (promise: Promise<void>) =>
  Promise.race([promise.then(() => 'woke'), new Promise((r) => setTimeout(() => r('waiting'), 50))]);

describe('AppendNotifier', () => {
  it('wakes a waiter on the next append', async () => {
    const notifier = new AppendNotifier();
    const wait = notifier.wait(10_000);
    notifier.notify();
    expect(await settled(wait)).toBe('woke');
  });

  it('does not lose an append made while the reader was reading: a stale mark ends the wait at once', async () => {
    const notifier = new AppendNotifier();
    const mark = notifier.mark;
    notifier.notify(); // while the reader read its page
    expect(await settled(notifier.wait(10_000, undefined, mark))).toBe('woke');
    expect(await settled(notifier.wait(10_000, undefined, notifier.mark))).toBe('waiting');
  });

  it("tells this thread's append listeners, and wakes every notifier for an append seen on another thread", async () => {
    const notifier = new AppendNotifier();
    let heard = 0;
    const stop = onLocalAppend(() => heard++);
    try {
      notifier.notify();
      expect(heard).toBe(1);
      const wait = notifier.wait(10_000);
      wakeAllSubscribers();
      expect(await settled(wait)).toBe('woke');
      expect(heard).toBe(1); // a notice from elsewhere is not handed on again
    } finally {
      stop();
    }
    notifier.notify();
    expect(heard).toBe(1);
  });
});

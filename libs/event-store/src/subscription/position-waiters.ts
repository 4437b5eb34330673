import { comparePositions } from '../position';

interface Waiter {
  position: string;
  resolve(reached: boolean): void;
  timer: NodeJS.Timeout;
}

/** Callers waiting for a subscription to reach a position (read-your-writes). */
export class PositionWaiters {
  private waiters = new Set<Waiter>();

  wait(position: string, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        resolve,
        timer: setTimeout(() => this.settle(waiter, false), timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  reached(position: string): void {
    for (const waiter of this.waiters) {
      if (comparePositions(position, waiter.position) >= 0) this.settle(waiter, true);
    }
  }

  cancelAll(): void {
    for (const waiter of this.waiters) this.settle(waiter, false);
  }

  private settle(waiter: Waiter, reached: boolean): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve(reached);
  }
}

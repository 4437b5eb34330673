import { comparePositions, readCheckpoint, type EventStore } from '@parley/event-store';
import { DomainError } from '@parley/core';
import type { Pool } from 'pg';
import { READ_MODELS_SUBSCRIPTION } from '../projections/projections';

const POLL_MS = 20;

interface Waiter {
  minPosition: string;
  done(err?: unknown): void;
}

/**
 * Read-your-writes: waits until the projections have processed `minPosition`, reading their
 * checkpoint, so it works whichever process runs the projector. A position past the newest event
 * of the store is refused at once (VALIDATION_FAILED): no write gave it, so waiting is for
 * nothing. However many queries wait, one poller per process reads the checkpoint. Bounded:
 * after `timeoutMs` a wait fails with TIMEOUT (a projector that is behind or down).
 */
export class ProjectionPositions {
  private readonly waiters = new Set<Waiter>();
  private polling = false;

  constructor(
    private readonly pool: Pool,
    private readonly store: Pick<EventStore, 'headPosition'>,
    private readonly timeoutMs: number,
  ) {}

  async waitFor(minPosition: string | undefined): Promise<void> {
    if (minPosition === undefined) return;
    const head = await this.store.headPosition();
    if (head === null || comparePositions(minPosition, head) > 0)
      throw DomainError.validation(
        [{ path: 'minPosition', message: `is past the newest event of the store (${head ?? 'none yet'})` }],
        `No event has position ${minPosition} yet; send a position a write returned.`,
      );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          waiter.done(
            new DomainError(
              'TIMEOUT',
              `The read models did not reach position ${minPosition} within ${this.timeoutMs} ms; retry later.`,
              { minPosition, timeoutMs: this.timeoutMs },
            ),
          ),
        this.timeoutMs,
      );
      const waiter: Waiter = {
        minPosition,
        done: (err) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          if (err === undefined) resolve();
          else reject(err);
        },
      };
      this.waiters.add(waiter);
      void this.poll();
    });
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.size > 0) {
        let checkpoint: string | null;
        try {
          checkpoint = await readCheckpoint(this.pool, READ_MODELS_SUBSCRIPTION);
        } catch (err) {
          for (const waiter of [...this.waiters]) waiter.done(err);
          return;
        }
        for (const waiter of [...this.waiters])
          if (checkpoint !== null && comparePositions(checkpoint, waiter.minPosition) >= 0) waiter.done();
        if (this.waiters.size > 0) await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } finally {
      this.polling = false;
    }
  }
}

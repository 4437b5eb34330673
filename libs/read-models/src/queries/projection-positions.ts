import { comparePositions, readCheckpoint } from '@parley/event-store';
import { DomainError } from '@parley/core';
import type { Pool } from 'pg';
import { READ_MODELS_SUBSCRIPTION } from '../projections/projections';

const POLL_MS = 20;

/**
 * Read-your-writes: waits until the projections have processed `minPosition`, reading their
 * checkpoint, so it works whichever process runs the projector. Bounded: after `timeoutMs` it
 * fails with TIMEOUT instead of hanging (a position from the future, or a projector that is down).
 */
export class ProjectionPositions {
  constructor(
    private readonly pool: Pool,
    private readonly timeoutMs: number,
  ) {}

  async waitFor(minPosition: string | undefined): Promise<void> {
    if (minPosition === undefined) return;
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const position = await readCheckpoint(this.pool, READ_MODELS_SUBSCRIPTION);
      if (position !== null && comparePositions(position, minPosition) >= 0) return;
      if (Date.now() >= deadline)
        throw new DomainError(
          'TIMEOUT',
          `The read models did not reach position ${minPosition} within ${this.timeoutMs} ms; retry later.`,
          { minPosition, timeoutMs: this.timeoutMs },
        );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

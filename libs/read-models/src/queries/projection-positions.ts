import { comparePositions } from '@parley/event-store';
import { DomainError } from '@parley/platform';
import type { Pool } from 'pg';
import { subscriptionIdOf } from '../projections/projections';

const POLL_MS = 20;

/**
 * Read-your-writes: waits until the named projections have processed `minPosition`, reading
 * their checkpoints, so it works whichever process runs the projector. Bounded: after
 * `timeoutMs` it fails with TIMEOUT instead of hanging (a position from the future, or a
 * projector that is down).
 */
export class ProjectionPositions {
  constructor(
    private readonly pool: Pool,
    private readonly timeoutMs: number,
  ) {}

  async waitFor(projections: readonly string[], minPosition: string | undefined): Promise<void> {
    if (minPosition === undefined) return;
    const ids = projections.map(subscriptionIdOf);
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const { rows } = await this.pool.query<{ position: string | null }>(
        'select position from es_checkpoints where subscription_id = any($1)',
        [ids],
      );
      const reached =
        rows.length === ids.length &&
        rows.every((r) => r.position !== null && comparePositions(r.position, minPosition) >= 0);
      if (reached) return;
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

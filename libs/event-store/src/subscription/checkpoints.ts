import type { ClientBase, Pool } from 'pg';
import { parsePosition } from '../position';

/** The checkpoint columns for a position: the opaque string, plus its parts when it is a PostgreSQL one. */
function columns(position: string | null): [string | null, string | null, bigint | null] {
  if (position === null) return [null, null, null];
  const parsed = parsePosition(position);
  return parsed.kind === 'pg' ? [position, String(parsed.tx), parsed.pos] : [position, null, null];
}

/** Creates the subscription's checkpoint row if needed and returns its position. */
export async function loadCheckpoint(db: Pool | ClientBase, subscriptionId: string): Promise<string | null> {
  await db.query('insert into es_checkpoints (subscription_id) values ($1) on conflict do nothing', [subscriptionId]);
  return readCheckpoint(db, subscriptionId);
}

/** Where a subscription has got to (null: nothing processed yet, or unknown subscription). */
export async function readCheckpoint(db: Pool | ClientBase, subscriptionId: string): Promise<string | null> {
  const { rows } = await db.query<{ position: string | null }>(
    'select position from es_checkpoints where subscription_id = $1',
    [subscriptionId],
  );
  return rows[0]?.position ?? null;
}

/**
 * Locks the checkpoint row for the rest of `tx` and tells whether it still holds `expected`.
 * Every writer of a checkpoint (a batch, a reset) locks the row first, so they serialise
 * without deadlocks, and a batch whose checkpoint moved under it rolls back instead of
 * applying events twice.
 */
export async function lockCheckpoint(
  tx: ClientBase,
  subscriptionId: string,
  expected: string | null,
): Promise<boolean> {
  const { rows } = await tx.query<{ position: string | null }>(
    'select position from es_checkpoints where subscription_id = $1 for update',
    [subscriptionId],
  );
  return rows.length === 1 && rows[0].position === expected;
}

export async function writeCheckpoint(tx: ClientBase, subscriptionId: string, position: string | null): Promise<void> {
  await tx.query(
    `update es_checkpoints set position = $2, last_tx = $3::xid8, last_position = $4, updated_at = now()
     where subscription_id = $1`,
    [subscriptionId, ...columns(position)],
  );
}

/**
 * Sends a subscription back to the beginning (a rebuild). `prepare` runs in the same
 * transaction, after the checkpoint row is locked: clear the read model there, so the reset
 * and the clearing commit together. A running runner notices at its next batch or poll.
 */
export async function resetSubscription(
  pool: Pool,
  subscriptionId: string,
  prepare?: (tx: ClientBase) => Promise<void>,
): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('begin');
    await tx.query('insert into es_checkpoints (subscription_id) values ($1) on conflict do nothing', [subscriptionId]);
    await tx.query('select 1 from es_checkpoints where subscription_id = $1 for update', [subscriptionId]);
    await prepare?.(tx);
    await writeCheckpoint(tx, subscriptionId, null);
    await tx.query('commit');
    tx.release();
  } catch (err) {
    await tx.query('rollback').catch(() => undefined);
    tx.release(err instanceof Error ? err : true);
    throw err;
  }
}

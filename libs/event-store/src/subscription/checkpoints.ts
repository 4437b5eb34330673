import type { ClientBase, Pool, QueryResult } from 'pg';
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
 * Inside a transaction: creates the subscription's checkpoint row if needed, locks it until the
 * transaction ends (every writer of a checkpoint does, so they serialise) and returns its position.
 */
export async function lockCheckpoint(tx: ClientBase, subscriptionId: string): Promise<string | null> {
  await tx.query('insert into es_checkpoints (subscription_id) values ($1) on conflict do nothing', [subscriptionId]);
  const { rows } = await tx.query<{ position: string | null }>(
    'select position from es_checkpoints where subscription_id = $1 for update',
    [subscriptionId],
  );
  return rows[0].position;
}

/**
 * Begins `tx`, locks the checkpoint row for the rest of it and tells whether the row still holds
 * `expected`. Every writer of a checkpoint (a batch, a reset) locks the row first, so they
 * serialise without deadlocks, and a batch whose checkpoint moved under it rolls back instead
 * of applying events twice. One round trip: several statements go in one query only through the
 * simple protocol, which takes no parameters, so the id is sent as an escaped literal.
 */
export async function beginLocked(
  tx: ClientBase,
  subscriptionId: string,
  expected: string | null,
  options: { synchronousCommit: boolean },
): Promise<boolean> {
  const begin = options.synchronousCommit ? 'begin' : 'begin; set local synchronous_commit = off';
  const results = (await tx.query(
    `${begin}; select position from es_checkpoints where subscription_id = ${tx.escapeLiteral(subscriptionId)} for update`,
  )) as unknown as QueryResult<{ position: string | null }>[];
  const { rows } = results[results.length - 1];
  return rows.length === 1 && rows[0].position === expected;
}

/** A statement with its parameters. */
export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * The update that moves a checkpoint to `position`, its parameters numbered from `$first` so it
 * can join other statements as a data-modifying CTE.
 */
export function checkpointUpdate(subscriptionId: string, position: string | null, first = 1): Statement {
  const [id, pos, lastTx, lastPosition] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return {
    text: `update es_checkpoints set position = ${pos}, last_tx = ${lastTx}::xid8, last_position = ${lastPosition},
       updated_at = now() where subscription_id = ${id}`,
    values: [subscriptionId, ...columns(position)],
  };
}

/**
 * The compare-and-set that moves a checkpoint from `expected` to `position` without a transaction
 * around it: an update returning a row only when the checkpoint still held `expected`. Its
 * parameters are numbered from `$first`, so it can join a batch's writes as a data-modifying CTE.
 */
export function checkpointSwap(
  subscriptionId: string,
  expected: string | null,
  position: string | null,
  first = 1,
): Statement {
  const update = checkpointUpdate(subscriptionId, position, first);
  return {
    text: `${update.text} and position is not distinct from $${first + update.values.length}::text returning 1`,
    values: [...update.values, expected],
  };
}

export async function writeCheckpoint(tx: ClientBase, subscriptionId: string, position: string | null): Promise<void> {
  const { text, values } = checkpointUpdate(subscriptionId, position);
  await tx.query(text, values);
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
    await lockCheckpoint(tx, subscriptionId);
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

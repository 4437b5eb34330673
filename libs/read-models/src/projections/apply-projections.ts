import type { CheckpointUpdate } from '@parley/event-store';
import type { ClientBase } from 'pg';
import type { ProjectedEvent } from './projected-event';
import type { Projection, TableNames } from './projection';
import { keyOf, selectRows, toJson, upsertRows, type Row, type RowModel } from './row-table';

/** A statement to send with the batch's writes, its parameters numbered from `$first`. */
export type AlsoWrite = CheckpointUpdate['take'];

interface TableRows {
  model: RowModel;
  rows: Row[];
}

/** Every table's keys in one list per table, each key once. */
function keysByTable(projections: readonly Projection[], events: readonly ProjectedEvent[]): TableRows[] {
  const byTable = new Map<string, { model: RowModel; keys: Map<string, Row> }>();
  for (const projection of projections) {
    const asked = projection.keysOf(events);
    for (const model of projection.models) {
      const keys = asked[model.table] ?? [];
      if (keys.length === 0) continue;
      const entry = byTable.get(model.table) ?? { model, keys: new Map<string, Row>() };
      for (const key of keys) entry.keys.set(keyOf(model, key), key);
      byTable.set(model.table, entry);
    }
  }
  return [...byTable.values()].map(({ model, keys }) => ({ model, rows: [...keys.values()] }));
}

/** The stored rows of every key, in one statement: one sub-select per table. */
async function load(tx: ClientBase, reads: TableRows[], names: TableNames): Promise<Map<string, Map<string, Row>>> {
  const stored = new Map<string, Map<string, Row>>();
  if (reads.length === 0) return stored;
  const { rows } = await tx.query<Record<string, Row[] | null>>(
    `select ${reads.map(({ model }, i) => `${selectRows(model, names(model.table), i + 1)} as t${i}`).join(',\n')}`,
    reads.map(({ rows: keys }) => toJson(keys)),
  );
  reads.forEach(({ model }, i) =>
    stored.set(model.table, new Map((rows[0][`t${i}`] ?? []).map((row) => [keyOf(model, row), row]))),
  );
  return stored;
}

/** Every table's rows (and `also`) in one statement: one data-modifying CTE per table. */
async function write(tx: ClientBase, writes: TableRows[], names: TableNames, also?: AlsoWrite): Promise<void> {
  const parts = writes.map(({ model }, i) => upsertRows(model, names(model.table), i + 1));
  const values: unknown[] = writes.map(({ rows }) => toJson(rows));
  if (also) {
    const extra = also(values.length + 1);
    parts.push(extra.text);
    values.push(...extra.values);
  }
  if (parts.length === 0) return;
  // The CTEs run against one snapshot and each writes a table of its own, so none sees or
  // touches another's rows.
  const text = parts.length === 1 ? parts[0] : `with ${parts.map((p, i) => `w${i} as (${p})`).join(',\n')} select`;
  await tx.query(text, values);
}

/**
 * Applies a batch of events to `projections` inside `tx` in two statements, whatever the number
 * of projections and events: one loads every row the batch touches, the projections fold the
 * events in memory, one writes every changed row (with `also`, the runner's checkpoint update).
 */
export async function applyProjections(
  tx: ClientBase,
  projections: readonly Projection[],
  events: readonly ProjectedEvent[],
  names: TableNames,
  also?: AlsoWrite,
): Promise<void> {
  const stored = await load(tx, keysByTable(projections, events), names);
  const rowsOf = (table: string) => {
    const rows = stored.get(table) ?? new Map<string, Row>();
    stored.set(table, rows);
    return rows;
  };
  const writes: TableRows[] = [];
  for (const projection of projections) {
    const changed = projection.fold(events, rowsOf);
    for (const model of projection.models) {
      const rows = changed[model.table] ?? [];
      if (rows.length > 0) writes.push({ model, rows });
    }
  }
  await write(tx, writes, names, also);
}

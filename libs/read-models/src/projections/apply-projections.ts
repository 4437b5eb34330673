import type { CheckpointSwap } from '@parley/event-store';
import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import { erasedIn, purgeErasedContent } from './erased-content';
import type { ProjectedEvent } from './projected-event';
import type { Projection, TableNames } from './projection';
import { keyOf, selectRows, toJson, upsertRows, type Row, type RowModel } from './row-table';

/** The checkpoint's compare-and-set, sent with the batch's writes: nothing is written unless it moves. */
export type Swap = CheckpointSwap['statement'];

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

const statementNames = new Map<string, string>();

/**
 * A batch's statement as a prepared one, named after its text. The texts differ only by the
 * tables a batch touches, so there are few, and each is parsed and planned once per connection:
 * for a tool turn's batch that work cost PostgreSQL more than running the statements (a write of
 * about 2.5 ms took 0.5–0.8 ms prepared, a load about 1 ms took 0.4–0.6 ms). A table replaced by
 * a rebuild is picked up by name again: PostgreSQL re-analyses a prepared statement whose tables
 * changed.
 */
function prepared(text: string): { name: string; text: string } {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `parley_rm_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return { name, text };
}

/** The stored rows of every key, in one statement: one sub-select per table. */
async function load(db: ClientBase, reads: TableRows[], names: TableNames): Promise<Map<string, Map<string, Row>>> {
  const stored = new Map<string, Map<string, Row>>();
  if (reads.length === 0) return stored;
  const { rows } = await db.query<Record<string, Row[] | null>>({
    ...prepared(
      `select ${reads.map(({ model }, i) => `${selectRows(model, names(model.table), i + 1)} as t${i}`).join(',\n')}`,
    ),
    values: reads.map(({ rows: keys }) => toJson(keys)),
  });
  reads.forEach(({ model }, i) =>
    stored.set(model.table, new Map((rows[0][`t${i}`] ?? []).map((row) => [keyOf(model, row), row]))),
  );
  return stored;
}

/**
 * Every table's rows in one statement: one data-modifying CTE per table. With `swap`, the
 * checkpoint's compare-and-set joins them and guards them: they write only when it moves the
 * checkpoint. Resolves whether it did (true without one).
 */
async function write(db: ClientBase, writes: TableRows[], names: TableNames, swap?: Swap): Promise<boolean> {
  const guard = swap ? 'exists (select from swap)' : undefined;
  const parts = writes.map(({ model }, i) => `w${i} as (${upsertRows(model, names(model.table), i + 1, guard)})`);
  const values: unknown[] = writes.map(({ rows }) => toJson(rows));
  if (swap) {
    const statement = swap(values.length + 1);
    parts.unshift(`swap as (${statement.text})`);
    values.push(...statement.values);
  }
  if (parts.length === 0) return true;
  // The CTEs run against one snapshot and each writes a table of its own, so none sees or
  // touches another's rows.
  const { rows } = await db.query<{ moved: boolean }>({
    ...prepared(`with ${parts.join(',\n')} select ${guard ?? 'true'} as moved`),
    values,
  });
  return rows[0].moved;
}

/**
 * Applies a batch of events to `projections` in two statements, whatever the number of
 * projections and events: one loads every row the batch touches, the projections fold the
 * events in memory, one writes every changed row. Inside a transaction, or on its own with
 * `swap` (the runner's checkpoint compare-and-set), when it resolves whether the rows were written.
 */
export async function applyProjections(
  db: ClientBase,
  projections: readonly Projection[],
  events: readonly ProjectedEvent[],
  names: TableNames,
  swap?: Swap,
): Promise<boolean> {
  const stored = await load(db, keysByTable(projections, events), names);
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
  const moved = await write(db, writes, names, swap);
  const erased = erasedIn(events);
  if (moved && erased.length > 0) {
    const tables = new Set(projections.flatMap((p) => p.models.map((m) => m.table)));
    await purgeErasedContent(db, erased, names, tables);
  }
  return moved;
}

import type { ClientBase } from 'pg';
import type { ProjectedEvent } from './projected-event';
import { keyOf, RowTable, type Row, type RowModel } from './row-table';

/** Logical table name -> the physical one this run writes (the live table, or its rebuild shadow). */
export type TableNames = (table: string) => string;

/** One read model: its tables and how a batch of events changes them (inside the runner's transaction). */
export interface Projection {
  name: string;
  tables: readonly string[];
  apply(events: ProjectedEvent[], tx: ClientBase, tables: TableNames): Promise<void>;
}

/** A read model whose rows each follow `evolve(row, event)`. */
export interface RowProjectionSpec {
  name: string;
  model: RowModel;
  /** The keys of the rows an event changes (none: the event does not concern this read model). */
  keysOf(e: ProjectedEvent): Row[];
  /** The row after the event; null leaves it as it is. */
  evolve(row: Row | null, e: ProjectedEvent, key: Row): Row | null;
}

/**
 * Runs a RowProjectionSpec over a batch: loads every row the batch touches in one query,
 * folds the events in memory, writes the changed rows in one upsert. A row remembers the
 * revision of the last event applied to it, so an event delivered again is skipped.
 */
export function rowProjection(spec: RowProjectionSpec): Projection & { spec: RowProjectionSpec } {
  const table = new RowTable(spec.model);
  return {
    name: spec.name,
    tables: [spec.model.table],
    spec,
    async apply(events, tx, tables) {
      const touched = events.map((e) => ({ e, keys: spec.keysOf(e) })).filter((t) => t.keys.length > 0);
      const physical = tables(spec.model.table);
      const rows = await table.load(
        tx,
        physical,
        touched.flatMap((t) => t.keys),
      );
      const changed = new Set<string>();
      for (const { e, keys } of touched)
        for (const key of keys) {
          const id = keyOf(spec.model, key);
          const row = rows.get(id) ?? null;
          if (row && (row.last_revision as number) >= e.revision) continue;
          const next = spec.evolve(row, e, key);
          if (!next) continue;
          rows.set(id, { ...next, ...key, last_revision: e.revision });
          changed.add(id);
        }
      await table.save(
        tx,
        physical,
        [...changed].map((id) => rows.get(id) as Row),
      );
    },
  };
}

import type { ProjectedEvent } from './projected-event';
import { keyOf, type Row, type RowModel } from './row-table';

/** Logical table name -> the physical one this run writes (the live table, or its rebuild shadow). */
export type TableNames = (table: string) => string;

/** Rows by logical table name. */
export type RowsByTable = Readonly<Record<string, Row[]>>;

/**
 * One read model: its tables and how a batch of events changes them, in memory. applyProjections
 * loads the rows every projection asks for in one statement and writes all their changes in
 * another.
 */
export interface Projection {
  name: string;
  models: readonly RowModel[];
  /** The keys of the rows the batch reads, by table. */
  keysOf(events: readonly ProjectedEvent[]): RowsByTable;
  /**
   * Folds the batch over the stored rows `stored(table)` returns (by keyOf; the map is this
   * fold's to change) and returns the rows to write, by table.
   */
  fold(events: readonly ProjectedEvent[], stored: (table: string) => Map<string, Row>): RowsByTable;
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
 * A Projection of a RowProjectionSpec: folds the events over the rows they touch and writes the
 * rows that changed. A row remembers the revision of the last event applied to it, so an event
 * delivered again is skipped.
 */
export function rowProjection(spec: RowProjectionSpec): Projection {
  const { model } = spec;
  return {
    name: spec.name,
    models: [model],
    keysOf: (events) => ({ [model.table]: events.flatMap((e) => spec.keysOf(e)) }),
    fold(events, stored) {
      const rows = stored(model.table);
      const changed = new Map<string, Row>();
      for (const e of events)
        for (const key of spec.keysOf(e)) {
          const id = keyOf(model, key);
          const row = rows.get(id) ?? null;
          if (row && (row.last_revision as number) >= e.revision) continue;
          const next = spec.evolve(row, e, key);
          if (!next) continue;
          const written = { ...next, ...key, last_revision: e.revision };
          rows.set(id, written);
          changed.set(id, written);
        }
      return { [model.table]: [...changed.values()] };
    },
  };
}

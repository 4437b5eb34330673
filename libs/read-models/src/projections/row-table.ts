import type { ClientBase } from 'pg';

export type Row = Record<string, unknown>;

/** A read-model table as the projections write it: its columns with their SQL types, and its key. */
export interface RowModel {
  table: string;
  key: readonly string[];
  /** Column -> SQL type, as jsonb_to_recordset needs it. Includes the key and last_revision. */
  columns: Readonly<Record<string, string>>;
}

const definitions = (model: RowModel, names: readonly string[]) =>
  names.map((c) => `${c} ${model.columns[c]}`).join(', ');

/** JSON for PostgreSQL: bigints as numbers (their values here fit a double). */
const toJson = (rows: Row[]) => JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));

/** Rows as the projections' evolve functions see them: plain JSON values. */
function normalise(row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row))
    out[k] = typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.toISOString() : v;
  return out;
}

export const keyOf = (model: RowModel, row: Row): string => JSON.stringify(model.key.map((k) => row[k]));

/**
 * Loads and saves whole rows of one table in one statement each, whatever the batch size:
 * the keys and rows travel as one JSON parameter through jsonb_to_recordset.
 */
export class RowTable {
  constructor(readonly model: RowModel) {}

  async load(tx: ClientBase, table: string, keys: Row[]): Promise<Map<string, Row>> {
    const rows = new Map<string, Row>();
    if (keys.length === 0) return rows;
    const { key } = this.model;
    const { rows: found } = await tx.query<Row>(
      `select t.* from ${table} t join jsonb_to_recordset($1::jsonb) as k(${definitions(this.model, key)})
       using (${key.join(', ')})`,
      [toJson(keys)],
    );
    for (const row of found) rows.set(keyOf(this.model, row), normalise(row));
    return rows;
  }

  async save(tx: ClientBase, table: string, rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    const names = Object.keys(this.model.columns);
    const updates = names.filter((c) => !this.model.key.includes(c)).map((c) => `${c} = excluded.${c}`);
    await tx.query(
      `insert into ${table} (${names.join(', ')})
       select ${names.join(', ')} from jsonb_to_recordset($1::jsonb) as r(${definitions(this.model, names)})
       on conflict (${this.model.key.join(', ')}) do update set ${updates.join(', ')}`,
      [toJson(rows)],
    );
  }
}

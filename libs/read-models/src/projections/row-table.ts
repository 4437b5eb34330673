export type Row = Record<string, unknown>;

/** A read-model table as the projections write it: its columns with their SQL types, and its key. */
export interface RowModel {
  table: string;
  key: readonly string[];
  /** Column -> SQL type, as jsonb_to_recordset needs it. Includes the key (and last_revision where kept). */
  columns: Readonly<Record<string, string>>;
  /**
   * 'replace' (the default): a row written replaces the stored one. 'add': its other columns are
   * added to the stored totals, summed in PostgreSQL, so such rows are never loaded.
   */
  merge?: 'replace' | 'add';
}

const definitions = (model: RowModel, names: readonly string[]) =>
  names.map((c) => `${c} ${model.columns[c]}`).join(', ');

/** JSON for PostgreSQL: bigints as numbers (their values here fit a double). */
export const toJson = (rows: Row[]): string =>
  JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));

export const keyOf = (model: RowModel, row: Row): string => JSON.stringify(model.key.map((k) => row[k]));

/**
 * A scalar sub-select: the JSON array of the rows of `table` whose keys are in parameter
 * `$param` (null when none is). The rows arrive as the projections' evolve functions see them:
 * plain JSON values (bigints and numerics as numbers, timestamps as ISO text).
 */
export function selectRows(model: RowModel, table: string, param: number): string {
  return `(select json_agg(t) from ${table} t
     join jsonb_to_recordset($${param}::jsonb) as k(${definitions(model, model.key)}) using (${model.key.join(', ')}))`;
}

/**
 * An upsert of the rows in parameter `$param` into `table`, merged as `model.merge` says; with
 * `guard`, only when that SQL condition holds.
 */
export function upsertRows(model: RowModel, table: string, param: number, guard?: string): string {
  const { key } = model;
  const values = Object.keys(model.columns).filter((c) => !key.includes(c));
  const names = [...key, ...values];
  const source = `jsonb_to_recordset($${param}::jsonb) as r(${definitions(model, names)})${guard ? ` where ${guard}` : ''}`;
  // One statement may not update a row twice: rows to add are summed per key first.
  return model.merge === 'add'
    ? `insert into ${table} as t (${names.join(', ')})
       select ${[...key, ...values.map((c) => `sum(${c})`)].join(', ')} from ${source} group by ${key.join(', ')}
       on conflict (${key.join(', ')}) do update set ${values.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')}`
    : `insert into ${table} as t (${names.join(', ')})
       select ${names.join(', ')} from ${source}
       on conflict (${key.join(', ')}) do update set ${values.map((c) => `${c} = excluded.${c}`).join(', ')}`;
}

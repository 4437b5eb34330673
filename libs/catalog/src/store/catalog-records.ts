import type { EntityDescriptor, LinkSpec } from '../model/descriptor';
import { memberOf } from '../model/descriptor';
import type { Row } from '../model/entity-schemas';
import { SECRET_SPECS, type Secret } from '../secrets/secret-specs';

/**
 * The API shape of a catalog entity: key, fields, link lists, and in place of secrets only
 * their flags. Built the same way from a bundle item and from stored rows, so comparing
 * the two tells whether an apply changes anything.
 */
export function shapeRecord(
  d: EntityDescriptor,
  values: Row,
  links: Record<string, Row[]>,
  secret: Secret | null,
): Row {
  const record: Row = { [d.key.field]: values[d.key.field] };
  for (const name of Object.keys(d.fields)) record[name] = values[name] ?? null;
  for (const link of d.links) record[link.field] = (links[link.field] ?? []).map((item) => linkShape(link, item));
  if (d.secrets) Object.assign(record, SECRET_SPECS[d.secrets].flags(secret ?? {}));
  return record;
}

function linkShape(link: LinkSpec, item: Row): unknown {
  if (link.scalar) return item[memberOf(link)];
  return Object.fromEntries(Object.keys(link.columns).map((c) => [c, item[c] ?? null]));
}

/** Link items of a record as stored rows (objects even where the API shows a plain list). */
export function linkItems(link: LinkSpec, record: Row): Row[] {
  const items = (record[link.field] as unknown[] | undefined) ?? [];
  return items.map((item) => (link.scalar ? { [memberOf(link)]: item } : (item as Row)));
}

/** Equality of records and secrets, independent of key order inside secrets. */
export function sameJson(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b);
}

function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Row).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

import type { FieldProblem } from '@parley/core';
import { z } from 'zod';
import type { EntityDescriptor, LinkSpec } from '../model/descriptor';
import { memberOf } from '../model/descriptor';
import { fieldSchema, keySchema } from '../model/fields';
import { SECRET_SPECS } from '../secrets/secret-specs';

/** The zod schema of one bundle item of an entity: unknown fields are refused. */
const cache = new Map<string, z.ZodType>();

export function itemSchema(d: EntityDescriptor): z.ZodType {
  let schema = cache.get(d.kind);
  if (!schema) {
    const shape: Record<string, z.ZodType> = { [d.key.field]: keySchema(d.key.max) };
    for (const [name, field] of Object.entries(d.fields)) shape[name] = fieldSchema(field);
    for (const link of d.links) shape[link.field] = z.array(linkItemSchema(link)).default([]);
    if (d.secrets) Object.assign(shape, SECRET_SPECS[d.secrets].input);
    schema = z.strictObject(shape);
    cache.set(d.kind, schema);
  }
  return schema;
}

function linkItemSchema(link: LinkSpec): z.ZodType {
  const item = z.strictObject(Object.fromEntries(Object.entries(link.columns).map(([k, f]) => [k, fieldSchema(f)])));
  if (!link.shorthand) return item;
  const member = memberOf(link);
  return z.preprocess((v) => (typeof v === 'string' ? { [member]: v } : v), item);
}

/** `actions[2].skills[0].skill`: the path style of every catalog problem. */
export function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (at, key) => (typeof key === 'number' ? `${at}[${key}]` : at ? `${at}.${String(key)}` : String(key)),
    prefix,
  );
}

/** One problem per zod issue; an unknown field is named in the path. */
export function issueProblems(prefix: string, error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: formatPath(prefix, [...issue.path, key]), message: 'unknown field' }))
      : [{ path: formatPath(prefix, issue.path) || '(bundle)', message: issue.message }],
  );
}

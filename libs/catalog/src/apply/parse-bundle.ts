import { DomainError, type FieldProblem } from '@parley/core';
import { parse as parseYaml } from 'yaml';
import { CATALOG_DESCRIPTORS, descriptorOf } from '../model/catalog-descriptors';
import type { EntityDescriptor } from '../model/descriptor';
import type { Row } from '../model/entity-schemas';
import { issueProblems, itemSchema } from './bundle-schemas';

/** One validated entity of a bundle, with where it was in the bundle. */
export interface BundleItem {
  d: EntityDescriptor;
  path: string;
  key: string;
  values: Row;
}

/** A bundle arrives parsed (JSON) or as text (YAML, or JSON sent as text). */
export function bundleFromBody(body: unknown): unknown {
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return body;
  try {
    return parseYaml(body.toString(), { prettyErrors: true });
  } catch (err) {
    throw DomainError.validation(
      [{ path: '(bundle)', message: (err as Error).message }],
      'The bundle is not valid YAML.',
    );
  }
}

const LISTS = CATALOG_DESCRIPTORS.map((d) => d.kind).join(', ');

/** Checks the bundle's shape and every item's fields; collects every problem, stops at none. */
export interface ParsedBundle {
  items: BundleItem[];
  /** Items with field problems, as given: their references are still checked, so every problem is named. */
  invalid: BundleItem[];
  problems: FieldProblem[];
}

export function parseItems(raw: unknown): ParsedBundle {
  const items: BundleItem[] = [];
  const invalid: BundleItem[] = [];
  const problems: FieldProblem[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return {
      items,
      invalid,
      problems: [{ path: '(bundle)', message: `expected an object with lists named ${LISTS}` }],
    };
  }
  for (const [name, list] of Object.entries(raw as Row)) {
    const d = descriptorOf(name);
    if (!d) {
      problems.push({ path: name, message: `unknown entity list; expected one of ${LISTS}` });
      continue;
    }
    if (list === null) continue;
    if (!Array.isArray(list)) {
      problems.push({ path: name, message: 'expected a list' });
      continue;
    }
    const seen = new Map<string, string>();
    list.forEach((value: unknown, index) => {
      const path = `${name}[${index}]`;
      const result = itemSchema(d).safeParse(value);
      if (!result.success) {
        problems.push(...issueProblems(path, result.error));
        if (typeof value === 'object' && value !== null) invalid.push({ d, path, key: '', values: value as Row });
        return;
      }
      const values = result.data as Row;
      const key = String(values[d.key.field]);
      const first = seen.get(key);
      if (first)
        problems.push({ path: `${path}.${d.key.field}`, message: `duplicate key '${key}' (also at ${first})` });
      else seen.set(key, path);
      items.push({ d, path, key, values });
    });
  }
  return { items, invalid, problems };
}

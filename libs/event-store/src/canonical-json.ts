import { unstorableText, type FieldProblem } from '@parley/core';

/**
 * Serialises a value as canonical JSON (object keys sorted recursively, no whitespace) and
 * refuses, with a path, anything that would not survive a JSON round trip unchanged:
 * undefined, functions, symbols, BigInt, NaN/Infinity, cycles, class instances (a Date would
 * come back as a string) and NUL characters (PostgreSQL's jsonb cannot hold them).
 * Returns null and fills `problems` when the value is not storable.
 */
export function canonicalJson(value: unknown, path: string, problems: FieldProblem[]): string | null {
  const before = problems.length;
  const text = write(value, path, problems, new Set());
  return problems.length === before ? text : null;
}

/** Canonical JSON of a value already known to be JSON (read back from a store). */
export function canonicalJsonOf(value: unknown): string {
  const problems: FieldProblem[] = [];
  const text = canonicalJson(value, '(value)', problems);
  if (text === null) throw new Error(`not JSON: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  return text;
}

function write(value: unknown, path: string, problems: FieldProblem[], open: Set<object>): string {
  switch (typeof value) {
    case 'string':
      if (value.includes('\u0000')) problems.push({ path, message: 'NUL characters (\\u0000) cannot be stored' });
      else if (unstorableText(value)) problems.push({ path, message: 'unpaired UTF-16 surrogates cannot be stored' });
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) problems.push({ path, message: `${value} is not a JSON number` });
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return writeObject(value, path, problems, open);
    case 'bigint':
      problems.push({ path, message: 'a BigInt is not JSON; pass it as a string' });
      return '';
    default:
      problems.push({
        path,
        message: `${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`} is not JSON`,
      });
      return '';
  }
}

function writeObject(value: object, path: string, problems: FieldProblem[], open: Set<object>): string {
  if (open.has(value)) {
    problems.push({ path, message: 'a circular reference is not JSON' });
    return '';
  }
  open.add(value);
  try {
    if (Array.isArray(value)) {
      const items: string[] = [];
      for (let i = 0; i < value.length; i++) items.push(write(value[i], `${path}[${i}]`, problems, open));
      return `[${items.join(',')}]`;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      problems.push({ path, message: `a ${kind} is not plain JSON; convert it (e.g. a Date to an ISO string)` });
      return '';
    }
    const keys = Object.keys(value).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const child = (value as Record<string, unknown>)[key];
      if (key.includes('\u0000')) problems.push({ path, message: 'NUL characters (\\u0000) cannot be stored' });
      parts.push(`${JSON.stringify(key)}:${write(child, `${path}.${key}`, problems, open)}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    open.delete(value);
  }
}

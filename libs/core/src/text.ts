/**
 * Text that neither PostgreSQL nor JSON can store: NUL characters (jsonb refuses \u0000) and
 * UTF-16 surrogates without their pair (not Unicode; jsonb refuses their escapes). Input that
 * holds them is refused; text from a model or a tool has them replaced, since it cannot be asked
 * again for better.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A quick look first: most text holds neither a NUL nor any surrogate, and this one-class scan is
 * about ten times faster than UNSTORABLE's check of each surrogate's pair.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const MAYBE_UNSTORABLE = /[\u0000\uD800-\uDFFF]/;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableText(text: string): string | null {
  if (!MAYBE_UNSTORABLE.test(text)) return null;
  if (text.includes('\u0000')) return 'NUL characters (\\u0000) are not accepted';
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text) ? 'unpaired UTF-16 surrogates are not accepted' : null;
}

/** `text` with each NUL and unpaired surrogate replaced by U+FFFD. */
export const storableText = (text: string): string =>
  MAYBE_UNSTORABLE.test(text) ? text.replace(UNSTORABLE, '\uFFFD') : text;

/**
 * `value` with every string in it (keys included) made storable; other values as they are. Copied
 * only where something changed: a value with nothing to replace (nearly every one) comes back as
 * it was, without a copy of each object and array in it.
 */
export function withStorableText<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const next: unknown = withStorableText(value[i]);
      if (next !== value[i]) (copy ??= [...value])[i] = next;
    }
    return (copy ?? value) as T;
  }
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value);
    let changed = false;
    const next = entries.map(([k, v]) => {
      const [key, field] = [storableText(k), withStorableText(v)];
      if (key !== k || field !== v) changed = true;
      return [key, field] as const;
    });
    return (changed ? Object.fromEntries(next) : value) as T;
  }
  return value;
}

/** Deeper input is refused: neither jsonb nor a recursive walk takes unbounded nesting. */
export const MAX_INPUT_DEPTH = 100;

type Walk =
  { kind: 'value'; value: unknown; path: string; depth: number } | { kind: 'problem'; path: string; message: string };

/**
 * Where in `value` a string cannot be stored, as field problems (`content`, `answers.why`), in
 * document order; nesting deeper than MAX_INPUT_DEPTH is one more problem. Iterative: a payload
 * nested twenty thousand levels deep must be refused, not overflow the stack.
 */
export function unstorableTextProblems(value: unknown, path = ''): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const stack: Walk[] = [{ kind: 'value', value, path, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.kind === 'problem') {
      problems.push({ path: item.path, message: item.message });
      continue;
    }
    const { value: v, path: p, depth } = item;
    if (typeof v === 'string') {
      const reason = unstorableText(v);
      if (reason) problems.push({ path: p || '(body)', message: reason });
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      problems.push({ path: p || '(body)', message: `nested deeper than ${MAX_INPUT_DEPTH} levels` });
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    const at = (key: string) => (p ? `${p}.${key}` : key);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      stack.push({ kind: 'value', value: child, path: at(key), depth: depth + 1 });
      const keyReason = Array.isArray(v) ? null : unstorableText(key);
      if (keyReason) stack.push({ kind: 'problem', path: at(key), message: `the key ${keyReason}` });
    }
  }
  return problems;
}

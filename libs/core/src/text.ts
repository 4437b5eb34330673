/**
 * Text that neither PostgreSQL nor JSON can store: NUL characters (jsonb refuses \u0000) and
 * UTF-16 surrogates without their pair (not Unicode; jsonb refuses their escapes). Input that
 * holds them is refused; text from a model or a tool has them replaced, since it cannot be asked
 * again for better.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'NUL characters (\\u0000) are not accepted';
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text) ? 'unpaired UTF-16 surrogates are not accepted' : null;
}

/** `text` with each NUL and unpaired surrogate replaced by U+FFFD. */
export const storableText = (text: string): string => text.replace(UNSTORABLE, '\uFFFD');

/** `value` with every string in it (keys included) made storable; other values as they are. */
export function withStorableText<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map(withStorableText) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), withStorableText(v)])) as T;
  return value;
}

/** Where in `value` a string cannot be stored, as field problems (`content`, `answers.why`). */
export function unstorableTextProblems(value: unknown, path = ''): { path: string; message: string }[] {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (typeof value === 'string') {
    const reason = unstorableText(value);
    return reason ? [{ path: path || '(body)', message: reason }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => unstorableTextProblems(v, at(String(i))));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [
      ...(unstorableText(k) ? [{ path: at(k), message: `the key ${unstorableText(k)}` }] : []),
      ...unstorableTextProblems(v, at(k)),
    ]);
  return [];
}

import type { FieldProblem } from '@parley/core';
import { TOOL_SECRET_PATHS } from '@parley/tools';
import type { Row } from '../model/entity-schemas';
import { deletePath, getPath, setExisting } from './object-paths';
import type { Secret } from './secret-specs';

/**
 * The secrets of a tool's execution config: the auth fields (TOOL_SECRET_PATHS), every header
 * value (`headers.<name>`, where a static `x-api-key` goes) and a URL carrying userinfo or a
 * query string (`url`; the stored config keeps it without them). Encrypted at rest, shown
 * only by name in `secretsSet`, put back at call time.
 */
const HEADER = 'headers.';
const URL_SECRET = 'url';

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The URL without userinfo, query string and fragment: what the catalog shows. */
export function publicUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  } catch {
    return text;
  }
}

const hasUrlSecret = (text: string): boolean => publicUrl(text) !== text;

/**
 * A provider's or MCP client's URL field holding userinfo or a query string: taken out of the
 * item (which keeps the public URL) as the secret `field`. Absent otherwise, so an update
 * giving the public URL keeps the stored one.
 */
export function takeUrlSecret(item: Row, field: string): Secret {
  const text = item[field];
  if (typeof text !== 'string' || !hasUrlSecret(text)) return {};
  item[field] = publicUrl(text);
  return { [field]: text };
}

/** The URL to call: the stored secret one when it is the shown URL plus its userinfo or query. */
export function callUrl(shown: unknown, secret: Secret | null, field: string): string | null {
  const full = secret?.[field];
  if (typeof full === 'string' && typeof shown === 'string' && publicUrl(full) === shown) return full;
  return typeof shown === 'string' ? shown : null;
}

export function originOf(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  try {
    return new URL(text).origin;
  } catch {
    return null;
  }
}

/** Takes the secrets out of a validated config (in place) and returns them. */
export function extractToolSecrets(config: Row | null): Secret {
  const taken: Secret = {};
  if (!config) return taken;
  for (const path of TOOL_SECRET_PATHS) {
    const value = getPath(config, path);
    if (value === undefined) continue;
    taken[path] = value;
    deletePath(config, path);
  }
  if (isObject(config.headers)) {
    for (const [name, value] of Object.entries(config.headers)) taken[`${HEADER}${name}`] = value;
    delete config.headers;
  }
  if (typeof config.url === 'string' && hasUrlSecret(config.url)) {
    taken[URL_SECRET] = config.url;
    config.url = publicUrl(config.url);
  }
  return taken;
}

/** Puts stored secrets back into a config (in place): the executors' view at call time. */
export function restoreToolSecrets(config: Row, secret: Secret | null): void {
  if (config.kind === 'http' && !isObject(config.headers)) config.headers = {};
  for (const [path, value] of Object.entries(secret ?? {})) {
    if (path.startsWith(HEADER)) {
      config.headers = { ...(isObject(config.headers) ? config.headers : {}), [path.slice(HEADER.length)]: value };
    } else if (path === URL_SECRET) {
      if (config.url === publicUrl(String(value))) config.url = value;
    } else setExisting(config, path, value);
  }
}

/**
 * Completes a config given without its secrets from the stored ones (an update need not repeat
 * a password, a header or a URL's token), but never across a change of destination: when the
 * URL's origin changes, a stored secret the request does not give again is a problem, so no
 * credential is sent to a host it was not given for.
 */
export function completeToolConfig(
  path: string,
  config: Row,
  stored: { record: Row; secret: Secret | null } | null,
): FieldProblem[] {
  const secret = stored?.secret ?? {};
  if (Object.keys(secret).length === 0) return [];
  const storedConfig = (stored?.record.config ?? {}) as Row;
  const storedUrl = (secret[URL_SECRET] as string | undefined) ?? storedConfig.url;
  if (typeof secret[URL_SECRET] === 'string' && config.url === storedConfig.url) config.url = secret[URL_SECRET];
  const moved = originOf(config.url) !== originOf(storedUrl);
  const missing: string[] = [];
  for (const secretPath of TOOL_SECRET_PATHS) {
    if (secret[secretPath] === undefined || getPath(config, secretPath) !== undefined) continue;
    if (moved) missing.push(secretPath);
    else setExisting(config, secretPath, secret[secretPath]);
  }
  const storedHeaders = Object.keys(secret).filter((p) => p.startsWith(HEADER));
  if (storedHeaders.length > 0 && config.headers === undefined) {
    if (moved) missing.push(...storedHeaders);
    else config.headers = Object.fromEntries(storedHeaders.map((p) => [p.slice(HEADER.length), secret[p]]));
  }
  return missing.map((p) => ({
    path: `${path}.config.${p}`,
    message: `the URL's origin changed (${originOf(storedUrl) ?? 'none'} → ${originOf(config.url) ?? 'none'}): give this secret again`,
  }));
}

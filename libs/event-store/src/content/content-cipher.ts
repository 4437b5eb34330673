import { createCipheriv, createDecipheriv, randomFillSync, type KeyObject } from 'node:crypto';

/**
 * Sealed content: one string per content value, `pc1s.` (a string) or `pc1j.` (any other JSON
 * value) and base64url(iv | tag | data), AES-256-GCM under the conversation's data key with the
 * conversation id as additional data (a value copied into another conversation does not open).
 * A string keeps it a string in every JSON column, text column and sentence it is copied into.
 */
export const ERASED = '[erased]';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const TOKEN = /pc1[sj]\.[A-Za-z0-9_-]{38,}/g;
const WHOLE_TOKEN = /^pc1[sj]\.[A-Za-z0-9_-]{38,}$/;

/** How many values this process sealed, and opened with AES (cache hits not counted): the benchmark reads them. */
export const cipherOps = { sealed: 0, opened: 0 };

/**
 * Random IVs drawn from a pool refilled from the CSPRNG a few KiB at a time: each is as random as
 * `randomBytes(12)` gives, without a call into the generator per value sealed (a tenth of the
 * seal's cost). Each IV is copied out, so no two values share a byte of it.
 */
const IV_POOL_BYTES = 4_096 - (4_096 % IV_BYTES);
const ivPool = Buffer.alloc(IV_POOL_BYTES);
let ivOffset = IV_POOL_BYTES;

function nextIv(): Buffer {
  if (ivOffset === IV_POOL_BYTES) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = Buffer.from(ivPool.subarray(ivOffset, ivOffset + IV_BYTES));
  ivOffset += IV_BYTES;
  return iv;
}

export function sealValue(key: KeyObject, conversationId: string, value: unknown): string {
  cipherOps.sealed++;
  const isText = typeof value === 'string';
  const text = isText ? value : JSON.stringify(value);
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(conversationId));
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const token = `${isText ? 'pc1s.' : 'pc1j.'}${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}`;
  // The turn and its waiters read what they appended right after: they need not decrypt it.
  rememberOpened(`${conversationId}:${token}`, text);
  return token;
}

/**
 * Recently sealed and opened tokens and their text: the turn worker and its waiters read the same
 * new events several times a turn. Bounded by count and size; consulted only for a conversation whose key is
 * there (an erased one never reads it), and a token opens only under its own conversation (the
 * id is part of the cache key).
 */
const OPENED_MAX = 4096;
const OPENED_MAX_CHARS = 4 * 1024 * 1024;
const opened = new Map<string, string>();
let openedChars = 0;

function rememberOpened(cacheKey: string, text: string): void {
  if (text.length > OPENED_MAX_CHARS / 16) return;
  opened.set(cacheKey, text);
  openedChars += text.length + cacheKey.length;
  while (opened.size > OPENED_MAX || openedChars > OPENED_MAX_CHARS) {
    const [oldest, value] = opened.entries().next().value!;
    opened.delete(oldest);
    openedChars -= value.length + oldest.length;
  }
}

/** The value a token seals; the token itself when it does not open with this key (it is never guessed at). */
export function openToken(key: KeyObject, conversationId: string, token: string): unknown {
  const cacheKey = `${conversationId}:${token}`;
  const hit = opened.get(cacheKey);
  if (hit !== undefined) return token.startsWith('pc1j.') ? JSON.parse(hit) : hit;
  const text = decrypt(key, conversationId, token);
  if (text === null) return token;
  rememberOpened(cacheKey, text);
  return token.startsWith('pc1j.') ? JSON.parse(text) : text;
}

/** Forgets what was opened (a conversation erased in this process: its plaintext goes too). */
export function forgetOpened(): void {
  opened.clear();
  openedChars = 0;
}

function decrypt(key: KeyObject, conversationId: string, token: string): string | null {
  cipherOps.opened++;
  const raw = Buffer.from(token.slice(5), 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(conversationId));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export const hasToken = (text: string): boolean => text.includes('pc1') && new RegExp(TOKEN.source).test(text);

/**
 * Replaces every sealed token anywhere in `value` (objects, arrays, strings) by what `open`
 * gives for it: a whole-string token by the value itself; a token inside a JSON text (a read
 * model's `{"answers":…}`) within that JSON; a token inside a sentence by its text.
 */
export function openDeep(value: unknown, open: (token: string) => unknown): unknown {
  if (typeof value === 'string') return openString(value, open);
  if (Array.isArray(value)) return value.map((v) => openDeep(v, open));
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, openDeep(v, open)]));
  }
  return value;
}

function openString(text: string, open: (token: string) => unknown): unknown {
  if (!hasToken(text)) return text;
  if (WHOLE_TOKEN.test(text)) return open(text);
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      return JSON.stringify(openDeep(JSON.parse(text), open));
    } catch {
      // not JSON: a sentence
    }
  }
  return text.replace(TOKEN, (token) => {
    const opened = open(token);
    return typeof opened === 'string' ? opened : JSON.stringify(opened);
  });
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'pk_';

/** A new API key: `pk_` and 32 random bytes (256 bits) in base64url. Shown once, never stored. */
export function generateApiKey(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

export const looksLikeApiKey = (token: string): boolean => token.startsWith(PREFIX);

/**
 * The stored form of a key. A fast hash is enough here: slow password hashes (bcrypt, scrypt)
 * protect guessable human passwords, while a 256-bit random key cannot be brute-forced from
 * its digest; a fast hash also keeps every authenticated request cheap.
 */
export function digestApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two secrets without leaking, through timing, how many leading characters match. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

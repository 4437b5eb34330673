import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { DomainError } from '@parley/core';

/**
 * AES-256-GCM for catalog secrets and for the conversations' data keys (content sealing in
 * libs/event-store). The ciphertext is `base64(iv | tag | data)`; the id of the key that made
 * it is stored beside it, so a rotation knows what to re-encrypt. The
 * additional data binds a ciphertext to its row: copied to another row it does not decrypt.
 */
export interface Sealed {
  keyId: string;
  ciphertext: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function parseKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('an encryption key must be 256 bits (64 hex or 44 base64 characters)');
  return key;
}

/** A short, stable name for a key that reveals nothing about it. */
export const keyIdOf = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

export class SecretCipher {
  /** KeyObjects: a cipher made from one skips preparing the key from bytes (a third of the time). */
  private readonly keys = new Map<string, KeyObject>();
  readonly currentKeyId: string | null;

  constructor(currentKey: string | null, previousKeys: readonly string[] = []) {
    for (const text of previousKeys) {
      const key = parseKey(text);
      this.keys.set(keyIdOf(key), createSecretKey(key));
    }
    const current = currentKey ? parseKey(currentKey) : null;
    this.currentKeyId = current ? keyIdOf(current) : null;
    if (current) this.keys.set(this.currentKeyId!, createSecretKey(current));
  }

  get canEncrypt(): boolean {
    return this.currentKeyId !== null;
  }

  encrypt(plaintext: string, binding: string): Sealed {
    if (!this.currentKeyId) throw missingKeyError();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(Buffer.from(binding));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.currentKeyId, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
  }

  decrypt(sealed: Sealed, binding: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) {
      throw new DomainError(
        'INTERNAL',
        `A catalog secret is encrypted with key ${sealed.keyId}, which is neither PARLEY_ENCRYPTION_KEY nor in PARLEY_PREVIOUS_ENCRYPTION_KEYS.`,
      );
    }
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new DomainError('INTERNAL', `A catalog secret (${binding}) failed its integrity check and was not used.`);
    }
  }
}

export const MISSING_KEY_MESSAGE =
  'cannot store a secret: no encryption key is configured (set PARLEY_ENCRYPTION_KEY to a 256-bit key)';

function missingKeyError(): DomainError {
  return new DomainError('VALIDATION_FAILED', `Parley ${MISSING_KEY_MESSAGE}.`);
}

import { DomainError } from '@parley/core';
import { keyIdOf, parseKey, SecretCipher } from './secret-cipher';

const KEY = 'ab'.repeat(32);

describe('SecretCipher', () => {
  it('round-trips a secret and never produces the plaintext', () => {
    const cipher = new SecretCipher(KEY);
    const sealed = cipher.encrypt('sk-secret-value', 'cat_providers/SIM');
    expect(sealed.keyId).toBe(keyIdOf(parseKey(KEY)));
    expect(sealed.ciphertext).not.toContain('sk-secret');
    expect(Buffer.from(sealed.ciphertext, 'base64').toString('utf8')).not.toContain('sk-secret');
    expect(cipher.decrypt(sealed, 'cat_providers/SIM')).toBe('sk-secret-value');
  });

  it('uses a fresh IV every time', () => {
    const cipher = new SecretCipher(KEY);
    expect(cipher.encrypt('x', 'b').ciphertext).not.toBe(cipher.encrypt('x', 'b').ciphertext);
  });

  it('refuses a ciphertext moved to another row', () => {
    const cipher = new SecretCipher(KEY);
    const sealed = cipher.encrypt('sk', 'cat_providers/SIM');
    expect(() => cipher.decrypt(sealed, 'cat_providers/OAI')).toThrow(/integrity check/);
  });

  it('decrypts with a previous key and says which key is missing otherwise', () => {
    const old = new SecretCipher(KEY).encrypt('sk', 'r');
    const rotated = new SecretCipher(Buffer.alloc(32, 1).toString('base64'), [KEY]);
    expect(rotated.decrypt(old, 'r')).toBe('sk');
    const forgetful = new SecretCipher(Buffer.alloc(32, 1).toString('base64'));
    expect(() => forgetful.decrypt(old, 'r')).toThrow(old.keyId);
  });

  it('refuses to encrypt without a key, with a clear error', () => {
    const cipher = new SecretCipher(null);
    expect(cipher.canEncrypt).toBe(false);
    expect(() => cipher.encrypt('sk', 'r')).toThrow(DomainError);
    expect(() => cipher.encrypt('sk', 'r')).toThrow(/PARLEY_ENCRYPTION_KEY/);
  });
});

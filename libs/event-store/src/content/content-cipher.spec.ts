import { createSecretKey, randomBytes } from 'node:crypto';
import { forgetOpened, openToken, sealValue } from './content-cipher';

describe('sealValue: AES-256-GCM tokens', () => {
  const key = createSecretKey(randomBytes(32));
  const ivOf = (token: string) => Buffer.from(token.slice(5), 'base64url').subarray(0, 12).toString('hex');

  it('gives every value a fresh IV, across refills of the IV pool, and each token opens to its value', () => {
    const tokens = Array.from({ length: 1_000 }, (_, i) =>
      sealValue(key, 'conversation-a', i % 2 ? 'same text' : { n: i }),
    );
    expect(new Set(tokens.map(ivOf)).size).toBe(1_000);
    // Opened by AES, not from the cache of what was just sealed.
    forgetOpened();
    expect(
      tokens.every(
        (t, i) =>
          JSON.stringify(openToken(key, 'conversation-a', t)) === JSON.stringify(i % 2 ? 'same text' : { n: i }),
      ),
    ).toBe(true);
  });

  it('does not open under another conversation', () => {
    const token = sealValue(key, 'conversation-a', 'private');
    expect(openToken(key, 'conversation-b', token)).toBe(token);
  });
});

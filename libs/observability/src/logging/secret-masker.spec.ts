import { randomBytes } from 'node:crypto';
import { SecretMasker } from './secret-masker';

const secret = (i: number) => `sk-${i}-${randomBytes(12).toString('hex')}`;

describe('SecretMasker', () => {
  it.each([3, 500])('masks raw and JSON-escaped forms, the longest match first, with %i secrets', (count) => {
    const masker = new SecretMasker();
    for (let i = 0; i < count; i++) masker.add(secret(i));
    masker.add('pass"word\\1');
    masker.add('token-abc');
    masker.add('token-abcdef');
    masker.add('short');
    const text = JSON.stringify({ msg: 'login pass"word\\1 with token-abcdef, then token-abc; short stays' });
    expect(masker.mask(text)).toBe(
      JSON.stringify({ msg: 'login [REDACTED] with [REDACTED], then [REDACTED]; short stays' }),
    );
    expect(masker.mask('nothing secret here')).toBe('nothing secret here');
  });

  it('does the same work with ten thousand secrets as with a hundred: one index lookup a character, none a secret', () => {
    const masker = new SecretMasker();
    const secrets = Array.from({ length: 10_000 }, (_, i) => secret(i));
    const line = `{"msg":"call failed","detail":"${randomBytes(400).toString('hex')} key ${secrets[77]} end"}`;
    /** The index lookups and prefix comparisons `work` makes, counted on the built-ins it calls. */
    const counted = (work: () => void) => {
      const lookups = jest.spyOn(Map.prototype, 'get');
      const compared = jest.spyOn(String.prototype, 'startsWith');
      try {
        work();
        return { lookups: lookups.mock.calls.length, compared: compared.mock.calls.length };
      } finally {
        lookups.mockRestore();
        compared.mockRestore();
      }
    };
    const maskLine = () => expect(masker.mask(line)).toContain('key [REDACTED] end');
    const addFirst = counted(() => secrets.slice(0, 100).forEach((s) => masker.add(s)));
    const maskWithHundred = counted(maskLine);
    secrets.slice(100, 9_900).forEach((s) => masker.add(s));
    const addLast = counted(() => secrets.slice(9_900).forEach((s) => masker.add(s)));
    const maskWithTenThousand = counted(maskLine);
    // A line: one lookup a character position, and a comparison only where a secret's prefix is.
    const positions = line.length - 5;
    expect(maskWithHundred.lookups).toBe(positions);
    expect(maskWithTenThousand.lookups).toBe(positions);
    expect(maskWithTenThousand.compared).toBeLessThanOrEqual(maskWithHundred.compared + 2);
    expect(maskWithTenThousand.compared).toBeLessThan(10);
    // Adding a hundred secrets: a lookup for each of their forms, with ten thousand as with none.
    expect(addLast).toEqual(addFirst);
    expect(addLast.lookups).toBe(100);
    // No alternation of every secret is built past the index's threshold.
    expect((masker as unknown as { pattern: RegExp | null }).pattern).toBeNull();
  });
});

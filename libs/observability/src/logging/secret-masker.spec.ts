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

  it('does not slow down with ten thousand secrets: adding one or masking a line costs what it did with a hundred', () => {
    const masker = new SecretMasker();
    const secrets = Array.from({ length: 10_000 }, (_, i) => secret(i));
    const line = `{"msg":"call failed","detail":"${randomBytes(400).toString('hex')} key ${secrets[77]} end"}`;
    const timed = (work: () => void) => {
      const started = performance.now();
      work();
      return performance.now() - started;
    };
    const maskLines = () => {
      for (let i = 0; i < 300; i++) expect(masker.mask(line)).toContain('key [REDACTED] end');
    };
    const addFirst = timed(() => secrets.slice(0, 100).forEach((s) => masker.add(s)));
    masker.mask(line);
    const maskWithHundred = timed(maskLines);
    secrets.slice(100, 9_900).forEach((s) => masker.add(s));
    const addLast = timed(() => secrets.slice(9_900).forEach((s) => masker.add(s)));
    masker.mask(line);
    const maskWithTenThousand = timed(maskLines);
    // One alternation of every secret, rebuilt on every add, made both grow about a hundredfold;
    // the bounds leave room for a loaded machine's pauses (35 ms against 25 once in CI).
    expect(addLast).toBeLessThan(Math.max(addFirst, 10) * 10);
    expect(maskWithTenThousand).toBeLessThan(maskWithHundred * 10);
  });
});

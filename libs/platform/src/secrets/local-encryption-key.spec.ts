import { loadConfig } from '@parley/config';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLocalEncryptionKey } from './local-encryption-key';

describe('withLocalEncryptionKey', () => {
  let dir: string;
  const warnings: string[] = [];
  const keyOf = async () =>
    (await withLocalEncryptionKey(loadConfig({ PARLEY_DATA_DIR: dir }), (m) => warnings.push(m))).security
      .encryptionKey;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-key-'));
    warnings.length = 0;
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('generates a key once, mode 0600, and reads the same key on the next start', async () => {
    const first = await keyOf();
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(join(dir, 'encryption.key'))).mode & 0o777).toBe(0o600);
    expect(await keyOf()).toBe(first);
    expect(warnings[0]).toMatch(/generated a development key/);
  });

  it('refuses to start, and keeps the file, when the key file holds no key', async () => {
    await writeFile(join(dir, 'encryption.key'), 'half-a-key\n');
    await expect(keyOf()).rejects.toThrow(/does not hold 64 hex characters.*It is not replaced/);
    expect(await readFile(join(dir, 'encryption.key'), 'utf8')).toBe('half-a-key\n');
  });

  it('refuses to start when the key file cannot be read', async () => {
    await mkdir(join(dir, 'encryption.key'));
    await expect(keyOf()).rejects.toThrow(/Cannot read the development encryption key .*encryption\.key/);
  });
});

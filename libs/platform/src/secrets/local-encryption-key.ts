import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '@parley/config';

/**
 * Outside production PARLEY_ENCRYPTION_KEY may be unset: a key is generated once and kept in
 * `<dataDir>/encryption.key` (mode 0600), so secrets stored in one run decrypt in the next.
 * Production refuses to boot without the variable (see libs/config).
 */
export async function withLocalEncryptionKey(config: Config, warn: (message: string) => void): Promise<Config> {
  if (config.security.encryptionKey) return config;
  const dir = resolve(config.database.dataDir);
  const file = join(dir, 'encryption.key');
  let key = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!/^[0-9a-f]{64}$/i.test(key)) {
    await mkdir(dir, { recursive: true });
    key = randomBytes(32).toString('hex');
    await writeFile(file, `${key}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    warn(`PARLEY_ENCRYPTION_KEY is not set: generated a development key in ${file}; set the variable in production`);
  } else {
    warn(`PARLEY_ENCRYPTION_KEY is not set: using the development key in ${file}`);
  }
  return { ...config, security: { ...config.security, encryptionKey: key } };
}

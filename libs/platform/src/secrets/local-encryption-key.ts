import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '@parley/config';

/**
 * Outside production PARLEY_ENCRYPTION_KEY may be unset: a key is generated once and kept in
 * `<dataDir>/encryption.key` (mode 0600), so secrets stored in one run decrypt in the next.
 * Production refuses to boot without the variable (see libs/config). A key file that exists but
 * cannot be read or holds no key stops the boot: replacing it would lose every stored secret.
 */
export async function withLocalEncryptionKey(config: Config, warn: (message: string) => void): Promise<Config> {
  if (config.security.encryptionKey) return config;
  const dir = resolve(config.database.dataDir);
  const file = join(dir, 'encryption.key');
  let key = await readKey(file);
  if (key === null) {
    await mkdir(dir, { recursive: true });
    key = randomBytes(32).toString('hex');
    // 'wx': never overwrite a key another process wrote meanwhile; read that one instead.
    const created = await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') return false;
        throw err;
      },
    );
    if (!created) key = (await readKey(file))!;
    else
      warn(`PARLEY_ENCRYPTION_KEY is not set: generated a development key in ${file}; set the variable in production`);
  } else {
    warn(`PARLEY_ENCRYPTION_KEY is not set: using the development key in ${file}`);
  }
  return { ...config, security: { ...config.security, encryptionKey: key } };
}

/** The key in `file`, or null when there is no such file; anything else is an error that names the file. */
async function readKey(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(
      `Cannot read the development encryption key ${file} (${(err as Error).message}); fix the file or set PARLEY_ENCRYPTION_KEY. It is not replaced: the secrets stored with it would be lost.`,
      { cause: err },
    );
  }
  const key = text.trim();
  if (!/^[0-9a-f]{64}$/i.test(key))
    throw new Error(
      `The development encryption key ${file} does not hold 64 hex characters; fix the file or set PARLEY_ENCRYPTION_KEY. It is not replaced: the secrets stored with it would be lost.`,
    );
  return key;
}

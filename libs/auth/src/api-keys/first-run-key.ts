import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError, type Config } from '@parley/config';
import type { ApiKeysService } from './api-keys.service';

/** The file, under the data directory, that holds the development admin key. */
export const ADMIN_KEY_FILE = 'admin.key';

export const adminKeyFileOf = (dataDir: string): string => join(resolve(dataDir), ADMIN_KEY_FILE);

export type FirstRunOutcome =
  /** PARLEY_ADMIN_API_KEY, a JWT issuer, or PARLEY_AUTH_ENABLED=false: nothing to do. */
  | 'configured'
  /** The database holds API keys, and no development key of ours works: they are the way in. */
  | 'keys-in-database'
  | 'created'
  | 'reused';

export interface FirstRunLog {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * The first run's way in. With no credential configured (no PARLEY_ADMIN_API_KEY, no JWT issuer,
 * authentication on) and no active key in the database, a development admin key is created
 * through the key service and written to `<dataDir>/admin.key` (mode 0600); a later start whose
 * file still holds a working key says where it is again and creates nothing. In production the
 * same situation refuses to start: a server nobody can enter is a misconfiguration.
 */
export async function ensureFirstRunKey(
  config: Config,
  keys: ApiKeysService,
  log: FirstRunLog,
  baseUrl: string,
): Promise<FirstRunOutcome> {
  const { security } = config;
  if (!security.authEnabled || security.adminApiKey || security.jwt.secret || security.jwt.jwksUrl) return 'configured';
  const file = adminKeyFileOf(config.database.dataDir);
  const production = config.env === 'production';
  if (!production) {
    const saved = await readSavedKey(file);
    if (saved && (await keys.authenticate(saved))) {
      log.info(`Using the development admin key in ${file}. ${tryIt(file, baseUrl)}`);
      return 'reused';
    }
    if (saved) log.warn(`The development admin key in ${file} no longer works (revoked, or another database).`);
  }
  if (await keys.hasActiveKey()) return 'keys-in-database';
  if (production)
    throw new ConfigError([
      'PARLEY_ADMIN_API_KEY: no credential is configured and the database holds no API key, so nobody could use this server; set PARLEY_ADMIN_API_KEY (or JWT_SECRET / JWT_JWKS_URL), or create a key first with `parley keys create --subject <you> --roles admin`. A development key is never generated in production.',
    ]);
  // The directory first: a key the file could not hold would be a key nobody has.
  await mkdir(resolve(config.database.dataDir), { recursive: true });
  const created = await keys.create({ subject: 'dev-admin', roles: ['admin'], name: 'development admin key' });
  await writeFile(file, `${created.key}\n`, { mode: 0o600 });
  await chmod(file, 0o600); // writeFile's mode applies only to a new file
  log.warn(
    `No credential is configured: created a development admin key in ${file} (mode 0600); set PARLEY_ADMIN_API_KEY or create your own keys before production. ${tryIt(file, baseUrl)}`,
  );
  return 'created';
}

const tryIt = (file: string, baseUrl: string) => `Try: curl --oauth2-bearer $(cat ${file}) ${baseUrl}/api/v1/actions`;

/** The key in `file`, or null when there is none to read (a missing or empty file). */
async function readSavedKey(file: string): Promise<string | null> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw new Error(`Cannot read the development admin key ${file}: ${err.message}`, { cause: err });
  });
  return text.trim() || null;
}

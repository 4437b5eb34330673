import { ConfigError, type Config } from '@parley/config';
import { startEmbeddedPostgres, runningEmbeddedPostgres } from './embedded-postgres';
import { unavailableError } from '../errors/unavailable';
import { pendingMigrations, runMigrations } from './migrate';

export interface ResolvedDatabase {
  /** The config with `database.url` set (and the pool size PGlite needs). */
  config: Config;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set, which must hold every migration of this build (else a ConfigError that
 * names the missing ones and `npm run migrate`: a Parley on tables that are not there would
 * answer every request with a 500); otherwise the embedded PostgreSQL under PARLEY_DATA_DIR
 * (reusing the one a running Parley serves), migrated. In embedded mode the pool holds one connection:
 * PGlite is a single PostgreSQL session, so connections only queue behind each other, and
 * session state (advisory locks, SET) is shared by all of them.
 */
export async function resolveDatabase(config: Config, warn: (message: string) => void): Promise<ResolvedDatabase> {
  if (config.database.url) {
    await assertMigrated(config.database.url);
    return { config, embedded: false, stop: async () => undefined };
  }
  const running = await runningEmbeddedPostgres(config.database.dataDir);
  const embedded = running
    ? null
    : await startEmbeddedPostgres(config.database.dataDir, {
        sharedBuffersMb: config.database.embeddedSharedBuffersMb,
      });
  const url = running ?? (embedded as { url: string }).url;
  if (embedded) {
    warn(`DATABASE_URL is not set: using the embedded PostgreSQL (PGlite) under ${config.database.dataDir}`);
    try {
      await runMigrations(url);
    } catch (err) {
      await embedded.stop();
      throw err;
    }
  }
  return {
    config: { ...config, database: { ...config.database, url, poolSize: 1 } },
    embedded: true,
    stop: async () => embedded?.stop(),
  };
}

async function assertMigrated(url: string): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const database = decodeURIComponent(pathname.slice(1));
  const where = `${hostname}:${port || 5432}`;
  const pending = await pendingMigrations(url).catch((err: unknown) => {
    if ((err as { code?: unknown }).code === '3D000')
      throw new ConfigError([
        `DATABASE_URL: there is no database ${database} on ${where}; create it (\`createdb ${database}\`), ` +
          `run \`npm run migrate\`, then start again`,
      ]);
    if (unavailableError(err))
      throw new Error(`PostgreSQL at ${where} (DATABASE_URL) could not be reached`, { cause: err });
    throw err;
  });
  if (pending.length === 0) return;
  throw new ConfigError([
    `DATABASE_URL: the database ${database} on ${where} lacks ${pending.length} of ` +
      `Parley's migrations (${pending.join(', ')}); run \`npm run migrate\` with the same DATABASE_URL, then start again`,
  ]);
}

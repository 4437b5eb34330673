import type { Config } from '@parley/config';
import { startEmbeddedPostgres, runningEmbeddedPostgres } from './embedded-postgres';
import { runMigrations } from './migrate';

export interface ResolvedDatabase {
  /** The config with `database.url` set (and the pool size PGlite needs). */
  config: Config;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under PARLEY_DATA_DIR (reusing the
 * one a running Parley serves), migrated. In embedded mode the pool holds one connection:
 * PGlite is a single PostgreSQL session, so connections only queue behind each other, and
 * session state (advisory locks, SET) is shared by all of them.
 */
export async function resolveDatabase(config: Config, warn: (message: string) => void): Promise<ResolvedDatabase> {
  if (config.database.url) return { config, embedded: false, stop: async () => undefined };
  const running = await runningEmbeddedPostgres(config.database.dataDir);
  const embedded = running ? null : await startEmbeddedPostgres(config.database.dataDir);
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

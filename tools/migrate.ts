import { loadConfig } from '@parley/config';
import { runMigrations } from '@parley/platform';

/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.database.url) throw new Error('DATABASE_URL: expected a postgres:// URL to migrate (it is not set)');
  const ran = await runMigrations(config.database.url);
  process.stdout.write(ran.length ? `applied: ${ran.join(', ')}\n` : 'database is up to date\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});

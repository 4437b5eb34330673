import { DataSource, MigrationExecutor } from 'typeorm';
import { migrations } from '../../../../migrations';

const dataSourceFor = (url: string) =>
  new DataSource({ type: 'postgres', url, migrations, migrationsTableName: 'parley_migrations', logging: false });

/** Applies every pending migration to the database at `url`; returns the names it ran. */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = await dataSourceFor(url).initialize();
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The names of this build's migrations the database at `url` has not applied, in order. A
 * database migrated further by a newer build has none pending for this one.
 */
export async function pendingMigrations(url: string): Promise<string[]> {
  const dataSource = await dataSourceFor(url).initialize();
  try {
    // Reads parley_migrations (none applied when the table is not there); writes nothing.
    const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
    return pending.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

import { DataSource } from 'typeorm';
import { migrations } from '../../../../migrations';

/** Applies every pending migration to the database at `url`; returns the names it ran. */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations,
    migrationsTableName: 'parley_migrations',
    logging: false,
  });
  await dataSource.initialize();
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

import { Client } from 'pg';
import { runMigrations } from '../libs/platform/src/database/migrate';
import { TEMPLATE_DATABASE, TEST_ADMIN_URL, databaseUrl } from '../libs/testing/src/test-database';

/**
 * Builds the migrated template database once per Jest run. A missing PostgreSQL fails the
 * run here, loudly, instead of letting database tests skip.
 */
export default async function globalSetup(): Promise<void> {
  const admin = new Client({ connectionString: TEST_ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${TEST_ADMIN_URL}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await admin.query(`drop database if exists "${TEMPLATE_DATABASE}" with (force)`);
    await admin.query(`create database "${TEMPLATE_DATABASE}"`);
  } finally {
    await admin.end();
  }
  await runMigrations(databaseUrl(TEMPLATE_DATABASE));
}

import { runMigrations } from '@parley/platform';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { databaseUrl, TEMPLATE_DATABASE, TEST_ADMIN_URL } from './test-server';

async function withAdmin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** `parley_<label>_<random>`, a name no other test uses. */
function uniqueName(label: string): string {
  const safe = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  return `parley_${safe}_${randomBytes(4).toString('hex')}`;
}

/**
 * Drops `name` once its connections are gone, forcing them out only after two seconds. A pool's
 * `end()` resolves before its backends have read the goodbye; forcing at once would send those
 * still-closing clients a FATAL that their pool, no longer listening, throws as unhandled.
 */
async function dropDatabase(admin: Client, name: string): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const { rows } = await admin.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where datname = $1',
      [name],
    );
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await admin.query(`drop database if exists "${name}" with (force)`);
}

/** The test database `name` on the test server, dropped (connections and all) by `drop`. */
function testDatabase(name: string): TestDatabase {
  return { name, url: databaseUrl(name), drop: () => withAdmin((c) => dropDatabase(c, name)) };
}

/**
 * A fresh, migrated database of its own for one test file, cloned from the template in
 * milliseconds, so parallel Jest workers never share rows.
 */
export async function createTestDatabase(label = 't'): Promise<TestDatabase> {
  const name = uniqueName(label);
  await withAdmin(async (c) => {
    // Cloning fails if anyone else is connected to the template; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`create database "${name}" template "${TEMPLATE_DATABASE}"`);
        return;
      } catch (err) {
        if (attempt >= 20 || !String((err as Error).message).includes('being accessed')) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return testDatabase(name);
}

/** A database with nothing in it, not even Parley's migrations, as `createdb` leaves one. */
export async function createEmptyDatabase(label = 'empty'): Promise<TestDatabase> {
  const name = uniqueName(label);
  await withAdmin((c) => c.query(`create database "${name}"`));
  return testDatabase(name);
}

/**
 * A fresh database migrated from scratch on the server at `adminUrl` (benchmarks and the demo,
 * which run outside Jest and its template), dropped by `drop`.
 */
export async function createScratchDatabase(label: string, adminUrl = TEST_ADMIN_URL): Promise<TestDatabase> {
  const name = `parley_${label}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = databaseUrl(name, adminUrl);
  const drop = async () => {
    await dropDatabase(admin, name);
    await admin.end();
  };
  await runMigrations(url).catch(async (err: unknown) => {
    await drop();
    throw err;
  });
  return { name, url, drop };
}

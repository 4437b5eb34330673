import { ConfigError, loadConfig } from '@parley/config';
import { createEmptyDatabase, createTestDatabase, databaseUrl, type TestDatabase } from '@parley/testing';
import { Client } from 'pg';
import { migrations } from '../../../../migrations';
import { resolveDatabase } from './resolve-database';

const names = migrations.map((m) => new m().name);

describe('resolveDatabase with DATABASE_URL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of databases) await db.drop();
  });
  const resolve = (url: string) => resolveDatabase(loadConfig({ DATABASE_URL: url }), () => undefined);

  it('takes a database that holds every migration of this build', async () => {
    const db = await createTestDatabase('resolve_migrated');
    databases.push(db);
    const resolved = await resolve(db.url);
    expect(resolved.embedded).toBe(false);
    expect(resolved.config.database.url).toBe(db.url);
  });

  it('refuses a database never migrated, naming every migration and how to apply them', async () => {
    const db = await createEmptyDatabase('resolve_empty');
    databases.push(db);
    const failed = await resolve(db.url).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ConfigError);
    const { hostname, port } = new URL(db.url);
    expect((failed as ConfigError).problems).toEqual([
      `DATABASE_URL: the database ${db.name} on ${hostname}:${port || 5432} lacks ${names.length} of Parley's ` +
        `migrations (${names.join(', ')}); run \`npm run migrate\` with the same DATABASE_URL, then start again`,
    ]);
  });

  it('refuses a database that lacks the newest migration, naming only that one', async () => {
    const db = await createTestDatabase('resolve_behind');
    databases.push(db);
    const client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query('delete from parley_migrations where name = $1', [names.at(-1)]);
    await client.end();
    const failed = await resolve(db.url).catch((err: unknown) => err);
    expect((failed as ConfigError).problems[0]).toContain(`lacks 1 of Parley's migrations (${names.at(-1)})`);
  });

  it('refuses a database that does not exist, saying how to make it', async () => {
    const url = databaseUrl('parley_no_such_database');
    const failed = await resolve(url).catch((err: unknown) => err);
    const { hostname, port } = new URL(url);
    expect((failed as ConfigError).problems).toEqual([
      `DATABASE_URL: there is no database parley_no_such_database on ${hostname}:${port || 5432}; create it ` +
        '(`createdb parley_no_such_database`), run `npm run migrate`, then start again',
    ]);
  });

  it('names the setting and the address when PostgreSQL cannot be reached', async () => {
    const url = 'postgres://postgres@127.0.0.1:1/parley';
    const failed = (await resolve(url).catch((err: unknown) => err)) as Error;
    expect(failed.message).toBe('PostgreSQL at 127.0.0.1:1 (DATABASE_URL) could not be reached');
    expect((failed.cause as Error).message).toMatch(/ECONNREFUSED/);
  });
});

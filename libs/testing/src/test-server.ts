// Nothing here imports @parley/*: Jest's global setup loads this file, where those paths do not resolve.

/** Where tests find PostgreSQL; CI and the README use the default. */
export const TEST_ADMIN_URL = process.env.PARLEY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The migrated template every test database is cloned from (named by test/global-setup.ts). */
export const TEMPLATE_DATABASE = process.env.PARLEY_TEST_TEMPLATE ?? 'parley_test_template';

export function databaseUrl(name: string, base = TEST_ADMIN_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { runMigrations } from '../libs/platform/src/database/migrate';
import { TEST_ADMIN_URL, databaseUrl } from '../libs/testing/src/test-server';
import { ensureUiBuilt } from '../tools/ui-build';

/** A template name that changes whenever a migration's text changes. */
function templateName(): string {
  const dir = join(__dirname, '..', 'migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  return `parley_tpl_${hash.digest('hex').slice(0, 16)}`;
}

/** How long a template of another migration set outlives its last use. */
const STALE_TEMPLATE_MS = 6 * 60 * 60 * 1000;

/**
 * Builds the migrated template database every test file clones, once per migration set: Jest
 * runs started side by side share it, guarded by an advisory lock. A missing PostgreSQL fails
 * the run here, loudly, instead of letting database tests skip.
 */
export default async function globalSetup(): Promise<void> {
  // The dashboard's browser tests (test/ui) need its build; a fresh clone has none yet.
  ensureUiBuilt((line) => process.stderr.write(`${line}\n`));
  const name = templateName();
  process.env.PARLEY_TEST_TEMPLATE = name;
  const admin = new Client({ connectionString: TEST_ADMIN_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${TEST_ADMIN_URL}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await admin.query('select pg_advisory_lock(72616101)');
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`drop database if exists "${building}" with (force)`);
      await admin.query(`create database "${building}"`);
      await runMigrations(databaseUrl(building));
      await admin.query(`alter database "${building}" rename to "${name}"`);
    }
    // Marks the template as in use now; templates of other migration sets are dropped only once
    // no run has used them for a while, so checkouts on other branches keep theirs mid-run.
    await admin.query(`comment on database "${name}" is '${Date.now()}'`);
    const stale = await admin.query<{ datname: string }>(
      `select datname from pg_database d
        where datname like 'parley\\_tpl\\_%' and datname <> $1
          and coalesce(nullif(shobj_description(d.oid, 'pg_database'), '')::bigint, 0) < $2`,
      [name, Date.now() - STALE_TEMPLATE_MS],
    );
    for (const { datname } of stale.rows)
      await admin.query(`drop database if exists "${datname}"`).catch(() => undefined);
  } finally {
    await admin.query('select pg_advisory_unlock(72616101)').catch(() => undefined);
    await admin.end();
  }
}

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderConfigTable, withConfigTable } from '@parley/config';

/**
 * Rewrites the configuration table of README.md from the config schema's `describe` texts:
 *   node -r ./tools/register.js tools/config-table.ts   (npm run docs:config)
 * libs/config/src/config-table.spec.ts fails while the README and the schema differ.
 */
async function main(): Promise<void> {
  const path = join(__dirname, '..', 'README.md');
  const readme = await readFile(path, 'utf8');
  const next = withConfigTable(readme, renderConfigTable());
  if (next === readme) {
    process.stdout.write('README.md: the configuration table is up to date\n');
    return;
  }
  await writeFile(path, next);
  process.stdout.write('README.md: the configuration table was rewritten from libs/config/src/config.schema.ts\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});

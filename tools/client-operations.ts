import 'reflect-metadata';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLIENT_OPERATIONS_FILE, formattedClientOperations } from '../libs/transport/src/operations/client-operations';

/**
 * Writes the typed client's operations file from the command and query tables:
 *   node -r ./tools/register.js tools/client-operations.ts   (npm run client:generate)
 * libs/transport/src/operations/client-operations.spec.ts fails while it is out of date.
 */
async function main(): Promise<void> {
  const path = join(__dirname, '..', CLIENT_OPERATIONS_FILE);
  const next = await formattedClientOperations(path);
  const current = await readFile(path, 'utf8').catch(() => '');
  if (next === current) {
    process.stdout.write(`${CLIENT_OPERATIONS_FILE} is up to date\n`);
    return;
  }
  await writeFile(path, next);
  process.stdout.write(`${CLIENT_OPERATIONS_FILE} was written from the command and query tables\n`);
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });

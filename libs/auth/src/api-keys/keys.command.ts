import type { Command } from 'commander';
import { loadConfig } from '@parley/config';
import { createPgPool, resolveDatabase } from '@parley/platform';
import { isRole, ROLES, type Role } from '../principal';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';

async function withKeys<T>(fn: (keys: ApiKeysService) => Promise<T>): Promise<T> {
  const database = await resolveDatabase(loadConfig(), (m) => process.stderr.write(`${m}\n`));
  const pool = createPgPool({ url: database.config.database.url as string, max: 1, applicationName: 'parley-cli' });
  try {
    return await fn(new ApiKeysService(new ApiKeyRepository(pool)));
  } finally {
    await pool.end();
    await database.stop();
  }
}

const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function parseRoles(value: string): Role[] {
  const roles = value.split(',').map((r) => r.trim());
  const bad = roles.filter((r) => !isRole(r));
  if (bad.length > 0) throw new Error(`unknown role(s) ${bad.join(', ')}; expected ${ROLES.join(', ')}`);
  return roles as Role[];
}

/** `parley keys create|revoke|list`: the same service as /api/v1/keys, on the configured database. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('API keys: create, revoke, list');
  keys
    .command('create')
    .description('create an API key; the key is printed once and never stored')
    .requiredOption('--subject <subject>', 'the caller the key stands for (owner of its conversations)')
    .option('--roles <roles>', `comma-separated roles: ${ROLES.join(', ')}`, 'client')
    .option('--name <name>', 'a label to recognise the key by')
    .action((opts: { subject: string; roles: string; name?: string }) =>
      withKeys(async (s) =>
        print(await s.create({ subject: opts.subject, roles: parseRoles(opts.roles), name: opts.name })),
      ),
    );
  keys
    .command('revoke <id>')
    .description('revoke an API key by id')
    .action((id: string) => withKeys(async (s) => print(await s.revoke(id))));
  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .action(() => withKeys(async (s) => print(await s.list())));
}

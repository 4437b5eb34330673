import { readFile } from 'node:fs/promises';
import { loadConfig, type Config } from '@parley/config';
import { DomainError, type FieldProblem } from '@parley/core';
import type { Command } from 'commander';
import { DataSource } from 'typeorm';
import { CatalogService } from '../apply/catalog.service';
import { CATALOG_ENTITIES } from '../model/entity-schemas';
import { rotateEncryptionKeys } from '../secrets/rotate-keys';
import { ConversationKeys } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { SecretCipher } from '../secrets/secret-cipher';

/** `parley catalog apply <file> [--dry-run]` and `parley catalog rotate-key`. */
export function registerCatalogCommands(program: Command): void {
  const catalog = program.command('catalog').description('Manage the catalog of agents, actions, models and tools');

  catalog
    .command('apply <file>')
    .description('Apply a YAML or JSON bundle of catalog entities (idempotent; never deletes)')
    .option('--dry-run', 'print what would change and write nothing', false)
    .action(async (file: string, options: { dryRun: boolean }) => {
      const text = await readFile(file, 'utf8');
      await withCatalog(async (dataSource, cipher, config) => {
        const result = await new CatalogService(dataSource, cipher, config).apply(text, { dryRun: options.dryRun });
        for (const [kind, diff] of Object.entries(result.changes)) {
          const line = (['created', 'updated', 'unchanged'] as const).map((s) => `${s} ${diff[s].length}`).join(', ');
          process.stdout.write(`${kind}: ${line}${changed(diff.created, diff.updated)}\n`);
        }
        process.stdout.write(options.dryRun ? 'Dry run: nothing was written.\n' : 'Applied.\n');
      });
    });

  catalog
    .command('rotate-key')
    .description(
      'Re-encrypt every catalog secret and re-wrap every conversation data key with PARLEY_ENCRYPTION_KEY (old keys in PARLEY_PREVIOUS_ENCRYPTION_KEYS)',
    )
    .action(async () => {
      await withCatalog(async (dataSource, cipher, config) => {
        const rotated = await rotateEncryptionKeys(dataSource, cipher);
        for (const [table, n] of Object.entries(rotated)) process.stdout.write(`${table}: ${n} re-encrypted\n`);
        const pool = createPgPool({ url: config.database.url as string, max: 1, applicationName: 'parley-cli' });
        try {
          const keys = await new ConversationKeys(pool, cipher).rotate();
          process.stdout.write(`conversation_keys: ${keys} re-wrapped\n`);
        } finally {
          await pool.end();
        }
      });
    });
}

const changed = (created: string[], updated: string[]) =>
  created.length + updated.length > 0
    ? ` (${[...created.map((k) => `+${k}`), ...updated.map((k) => `~${k}`)].join(' ')})`
    : '';

async function withCatalog(
  work: (dataSource: DataSource, cipher: SecretCipher, config: Config) => Promise<void>,
): Promise<void> {
  const config: Config = loadConfig();
  if (!config.database.url) throw new Error('DATABASE_URL: the catalog commands need a postgres:// URL');
  const cipher = new SecretCipher(config.security.encryptionKey, config.security.previousEncryptionKeys);
  const dataSource = await new DataSource({
    type: 'postgres',
    url: config.database.url,
    entities: CATALOG_ENTITIES,
  }).initialize();
  try {
    await work(dataSource, cipher, config);
  } catch (err) {
    throw err instanceof DomainError ? new Error(describe(err)) : err;
  } finally {
    await dataSource.destroy();
  }
}

function describe(err: DomainError): string {
  const problems = (err.details?.problems as FieldProblem[] | undefined) ?? [];
  return [err.message, ...problems.map((p) => `  ${p.path}: ${p.message}`)].join('\n');
}

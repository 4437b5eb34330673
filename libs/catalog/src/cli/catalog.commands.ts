import { readFile } from 'node:fs/promises';
import { loadConfig, type Config } from '@parley/config';
import { DomainError, type FieldProblem } from '@parley/core';
import { Option, type Command } from 'commander';
import { DataSource } from 'typeorm';
import { parse as parseYaml } from 'yaml';
import { CatalogService } from '../apply/catalog.service';
import { CATALOG_ENTITIES } from '../model/entity-schemas';
import { rotateEncryptionKeys } from '../secrets/rotate-keys';
import { SecretCipher } from '../secrets/secret-cipher';

/**
 * `parley catalog apply <file> [--dry-run]` and `parley catalog rotate-key` on the database;
 * the entity and sharing commands (`list`, `get`, `create`, `update`, `delete`, `acl`, `share`,
 * `unshare`, `available`) through a running Parley's HTTP API, as the caller of `--api-key`.
 */
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
      'Re-encrypt every catalog secret with PARLEY_ENCRYPTION_KEY (old keys in PARLEY_PREVIOUS_ENCRYPTION_KEYS)',
    )
    .action(async () => {
      await withCatalog(async (dataSource, cipher) => {
        const rotated = await rotateEncryptionKeys(dataSource, cipher);
        for (const [table, n] of Object.entries(rotated)) process.stdout.write(`${table}: ${n} re-encrypted\n`);
      });
    });

  registerEntityCommands(catalog);
}

interface ServerOptions {
  url: string;
  apiKey?: string;
}

interface ErrorReply {
  error?: { code?: string; message?: string; details?: { problems?: FieldProblem[] } };
}

/** One call to the HTTP API; a refusal becomes an error with the server's code, sentence and field problems. */
async function call<T>(server: ServerOptions, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, server.url), {
    method,
    headers: {
      ...(server.apiKey ? { authorization: `Bearer ${server.apiKey}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const error = (parsed as ErrorReply | null)?.error;
    const problems = (error?.details?.problems ?? []).map((p) => `${p.path}: ${p.message}`);
    throw new Error(
      `${error?.code ?? res.status}: ${error?.message ?? res.statusText}${problems.length ? ` (${problems.join('; ')})` : ''}`,
    );
  }
  return parsed as T;
}

/** Where the running Parley is, and the key to call it with; commander reads both from the environment too. */
const serverOptions = (command: Command) =>
  command
    .addOption(new Option('--url <url>', 'where Parley serves HTTP').env('PARLEY_URL').default('http://127.0.0.1:3000'))
    .addOption(new Option('--api-key <key>', 'the API key to act as').env('PARLEY_API_KEY'));

const entityPath = (collection: string, key?: string) =>
  `/api/v1/catalog/${encodeURIComponent(collection)}${key === undefined ? '' : `/${encodeURIComponent(key)}`}`;
const aclPath = (collection: string, key: string, grantee?: string) =>
  `${entityPath(collection, key)}/acl${grantee === undefined ? '' : `/${encodeURIComponent(grantee)}`}`;
const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const AVAILABLE: Readonly<Record<string, string>> = {
  models: '/api/v1/models/available',
  providers: '/api/v1/providers/available',
  actions: '/api/v1/actions/available',
};

/** A YAML or JSON file (`-`: standard input) holding one entity. */
async function entityFrom(file: string): Promise<unknown> {
  const text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  return parseYaml(text) as unknown;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function registerEntityCommands(catalog: Command): void {
  serverOptions(
    catalog
      .command('list <collection>')
      .description('The entities of a collection; a client: the providers or models it may use'),
  ).action(async (collection: string, options: ServerOptions) => {
    const rows = await call<Record<string, unknown>[]>(options, 'GET', entityPath(collection));
    for (const row of rows) process.stdout.write(`${line(row)}\n`);
  });

  serverOptions(catalog.command('get <collection> <key>').description('One entity as JSON (secrets as flags)')).action(
    async (collection: string, key: string, options: ServerOptions) => {
      json(await call(options, 'GET', entityPath(collection, key)));
    },
  );

  serverOptions(
    catalog
      .command('create <collection> <file>')
      .description('Create an entity from a YAML or JSON file (- for stdin); a client owns what it creates'),
  ).action(async (collection: string, file: string, options: ServerOptions) => {
    json(await call(options, 'POST', entityPath(collection), await entityFrom(file)));
  });

  serverOptions(
    catalog
      .command('update <collection> <key> <file>')
      .description('Replace an entity with the one in a YAML or JSON file (- for stdin)'),
  ).action(async (collection: string, key: string, file: string, options: ServerOptions) => {
    json(await call(options, 'PUT', entityPath(collection, key), await entityFrom(file)));
  });

  serverOptions(catalog.command('delete <collection> <key>').description('Delete an entity and its ACL')).action(
    async (collection: string, key: string, options: ServerOptions) => {
      await call(options, 'DELETE', entityPath(collection, key));
      process.stdout.write(`deleted ${collection}/${key}\n`);
    },
  );

  serverOptions(
    catalog.command('acl <collection> <key>').description('Who a provider, model or tool is shared with'),
  ).action(async (collection: string, key: string, options: ServerOptions) => {
    const acl = await call<{ grantee: string; permission: string }[]>(options, 'GET', aclPath(collection, key));
    for (const e of acl) process.stdout.write(`${e.grantee}\t${e.permission}\n`);
  });

  serverOptions(
    catalog
      .command('share <collection> <key> <grantee>')
      .description('Share a provider or model with a subject (admins: also role:<name>, and tools)')
      .option('--manage', 'let the grantee change, delete and share it too (default: use only)', false),
  ).action(async (collection: string, key: string, grantee: string, options: ServerOptions & { manage: boolean }) => {
    const permission = options.manage ? 'manage' : 'read';
    await call(options, 'PUT', aclPath(collection, key, grantee), { permission });
    process.stdout.write(`shared ${collection}/${key} with ${grantee} (${permission})\n`);
  });

  serverOptions(catalog.command('unshare <collection> <key> <grantee>').description('Take a share back')).action(
    async (collection: string, key: string, grantee: string, options: ServerOptions) => {
      await call(options, 'DELETE', aclPath(collection, key, grantee));
      process.stdout.write(`unshared ${collection}/${key} from ${grantee}\n`);
    },
  );

  serverOptions(
    catalog
      .command('available <what>')
      .description('What the caller may use: models (active, on active providers), providers or actions')
      .option('--model-type <type>', 'models: inference, embedding or rerank', 'inference'),
  ).action(async (what: string, options: ServerOptions & { modelType: string }) => {
    const path = AVAILABLE[what];
    if (!path) throw new Error(`expected models, providers or actions, not '${what}'`);
    const query = what === 'models' ? `?modelType=${encodeURIComponent(options.modelType)}` : '';
    const rows = await call<Record<string, unknown>[]>(options, 'GET', path + query);
    for (const row of rows) process.stdout.write(`${line(row)}\n`);
  });
}

/** An entity on one line: its key, then what tells it apart. */
const line = (row: Record<string, unknown>): string =>
  [row.code ?? row.name, row.description, row.model ?? row.llmModelName ?? row.providerType, row.status]
    .filter((v) => v !== undefined && v !== null)
    .join('\t');

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

import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COMMANDS } from '@parley/conversation';
import { CLIENT_OPERATIONS_FILE, formattedClientOperations } from './client-operations';
import { QUERIES } from './query-table';

const ROOT = join(__dirname, '..', '..', '..', '..');
const CLIENT = join(ROOT, 'libs', 'client');

describe('@parley/client, derived from the command and query tables', () => {
  it('has the operations file the tables render (else run `npm run client:generate`)', async () => {
    const path = join(ROOT, CLIENT_OPERATIONS_FILE);
    const current = await readFile(path, 'utf8');
    if (current !== (await formattedClientOperations(path)))
      throw new Error(
        `${CLIENT_OPERATIONS_FILE} differs from the command and query tables: run \`npm run client:generate\``,
      );
  });

  it('builds on its own into JS and .d.ts that need nothing of the server at run time', async () => {
    const pkg = JSON.parse(await readFile(join(CLIENT, 'package.json'), 'utf8')) as Record<string, any>;
    expect(pkg.name).toBe('@parley/client');
    expect(pkg.dependencies ?? {}).toEqual({});
    const out = await mkdtemp(join(tmpdir(), 'parley-client-'));
    try {
      // The package's own build (its tsconfig, no path aliases): it type-checks standalone.
      await promisify(execFile)(
        process.execPath,
        [require.resolve('typescript/bin/tsc'), '-p', join(CLIENT, 'tsconfig.build.json'), '--outDir', out],
        { cwd: CLIENT },
      );
      const files = await readdir(out);
      expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'client.d.ts', 'nats-transport.js']));
      const required = new Set<string>();
      for (const file of files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
        const text = await readFile(join(out, file), 'utf8');
        for (const [, name] of text.matchAll(/(?:require\(|from |import\()['"]([^'"]+)['"]/g)) required.add(name);
      }
      expect([...required].filter((name) => !name.startsWith('./')).sort()).toEqual(['nats']);

      // The built package works: it knows every operation of the tables, and nats is loaded only when used.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const built = require(join(out, 'index.js')) as typeof import('@parley/client');
      expect(Object.keys(built.OPERATIONS).sort()).toEqual([...COMMANDS, ...QUERIES].map((op) => op.name).sort());
      const client = new built.ParleyClient(built.httpTransport({ url: 'http://127.0.0.1:1', apiKey: 'k' }));
      expect(typeof client.queries.getUsage).toBe('function');
      expect(typeof client.commands.pauseConversation).toBe('function');
      const refused = await client.conversations.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(built.ParleyError);
      expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});

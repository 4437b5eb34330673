import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForHttp } from '@parley/testing';

const ROOT = join(__dirname, '../../..');

/** `npm start`'s process (apps/server), with only `env` besides PATH and HOME. */
function startServer(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/server/src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => (output += String(c)));
  child.stderr?.on('data', (c: Buffer) => (output += String(c)));
  return { child, output: () => output };
}

async function stop(child: ChildProcess | undefined): Promise<number | null> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

describe('npm start with nothing configured (embedded default)', () => {
  let dataDir: string;
  let child: ChildProcess | undefined;
  let port: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'parley-embedded-'));
    port = await freePort();
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  const env = () => ({ NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir });
  const keysWith = async (key: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as { keys?: { id: string; subject: string }[] } };
  };

  it('serves on an embedded PostgreSQL, creates a development admin key that works, and stops on SIGTERM', async () => {
    const server = startServer(env());
    child = server.child;
    const live = await waitForHttp(`http://127.0.0.1:${port}/health`, child, server.output, 35_000);
    expect(live.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ok',
      checks: { postgres: 'ok', redis: 'disabled', nats: 'disabled' },
    });
    expect((await stat(join(dataDir, 'encryption.key'))).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain('"context":"NestApplication"');

    const file = join(dataDir, 'admin.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const key = (await readFile(file, 'utf8')).trim();
    expect(key.length).toBeGreaterThan(20);
    expect(server.output()).toContain(`created a development admin key in ${file} (mode 0600)`);
    expect(server.output()).toContain(
      `Try: curl --oauth2-bearer $(cat ${file}) http://127.0.0.1:${port}/api/v1/actions`,
    );
    // The key is never logged, only where it is.
    expect(server.output()).not.toContain(key);

    const listed = await keysWith(key);
    expect(listed.status).toBe(200);
    expect(listed.body.keys!.map((k) => k.subject)).toEqual(['dev-admin']);
    expect((await keysWith('not-a-key-at-all')).status).toBe(401);

    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('on a later start says where the key is again and creates no second one', async () => {
    const before = await readFile(join(dataDir, 'admin.key'), 'utf8');
    const server = startServer(env());
    child = server.child;
    await waitForHttp(`http://127.0.0.1:${port}/health`, child, server.output, 35_000);
    expect(server.output()).toContain(`Using the development admin key in ${join(dataDir, 'admin.key')}`);
    expect(server.output()).not.toContain('created a development admin key');
    expect(await readFile(join(dataDir, 'admin.key'), 'utf8')).toBe(before);
    const listed = await keysWith(before.trim());
    expect(listed.status).toBe(200);
    expect(listed.body.keys!.map((k) => k.subject)).toEqual(['dev-admin']);
    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('replaces a development key that was revoked, when the database holds no other', async () => {
    const file = join(dataDir, 'admin.key');
    const old = (await readFile(file, 'utf8')).trim();
    let server = startServer(env());
    child = server.child;
    await waitForHttp(`http://127.0.0.1:${port}/health`, child, server.output, 35_000);
    const mine = (await keysWith(old)).body.keys!.find((k) => k.subject === 'dev-admin')!;
    const revoked = await fetch(`http://127.0.0.1:${port}/api/v1/keys/${mine.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${old}` },
    });
    expect(revoked.status).toBe(200);
    expect(await stop(child)).toBe(0);

    server = startServer(env());
    child = server.child;
    await waitForHttp(`http://127.0.0.1:${port}/health`, child, server.output, 35_000);
    expect(server.output()).toContain(`The development admin key in ${file} no longer works`);
    expect(server.output()).toContain(`created a development admin key in ${file}`);
    const renewed = (await readFile(file, 'utf8')).trim();
    expect(renewed).not.toBe(old);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await keysWith(old)).status).toBe(401);
    expect((await keysWith(renewed)).status).toBe(200);
    expect(await stop(child)).toBe(0);
  }, 90_000);

  it('in production refuses to start without a credential, says why, and writes no key', async () => {
    const prodDir = await mkdtemp(join(tmpdir(), 'parley-production-'));
    try {
      const server = startServer({
        NODE_ENV: 'production',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        PARLEY_DATA_DIR: prodDir,
        PARLEY_ENCRYPTION_KEY: 'ab'.repeat(32),
      });
      child = server.child;
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(server.output()).toContain('Parley cannot start; fix the configuration:');
      expect(server.output()).toContain('PARLEY_ADMIN_API_KEY: no credential is configured');
      expect(server.output()).toContain('A development key is never generated in production');
      await expect(stat(join(prodDir, 'admin.key'))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(prodDir, { recursive: true, force: true });
    }
  }, 60_000);
});

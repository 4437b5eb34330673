import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForHttp } from '@parley/testing';

describe('npm start with nothing configured (embedded default)', () => {
  let dataDir: string;
  let child: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'parley-embedded-'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves /health and /health/ready on an embedded PostgreSQL, and stops on SIGTERM', async () => {
    const port = await freePort();
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    Object.assign(env, { NODE_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir });
    child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/server/src/main.ts'], {
      cwd: join(__dirname, '../../..'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => (output += String(c)));
    child.stderr?.on('data', (c: Buffer) => (output += String(c)));

    const live = await waitForHttp(`http://127.0.0.1:${port}/health`, child, () => output, 35_000);
    expect(live.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ok',
      checks: { postgres: 'ok', redis: 'disabled', nats: 'disabled' },
    });
    const key = await stat(join(dataDir, 'encryption.key'));
    expect(key.mode & 0o777).toBe(0o600);
    expect(output).toContain('"context":"NestApplication"');

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 45_000);
});

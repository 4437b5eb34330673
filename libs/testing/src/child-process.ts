import { randomInt } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A loopback port free right now, for a child process that must be told its port up front. */
export async function freePort(): Promise<number> {
  // Below the kernel's ephemeral range (32768 and up): no outgoing connection or listen(0) is
  // given a port from here, so the port stays free until the child that asked binds it.
  for (;;) {
    const port = 20_000 + randomInt(12_768);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, 'close');
    return port;
  }
}

/**
 * Polls `url` until the child answers; fails with the child's output when it exits first or
 * `ms` pass.
 */
export async function waitForHttp(
  url: string,
  child: ChildProcess,
  output: () => string,
  ms: number,
): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the process exited with ${child.exitCode}:\n${output()}`);
    try {
      return await fetch(url);
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer from ${url} within ${ms} ms:\n${output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * A Redis server of the test's own on `port` (the machine's `redis-server`, nothing kept on
 * disk), resolved once it accepts connections: for tests that stop Redis, which must never stop
 * the machine's shared one.
 */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += String(chunk);
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return child;
}

/** Debian installs nats-server in /usr/sbin, which a non-root PATH may leave out. */
const NATS_SERVER = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';

/**
 * A NATS server with JetStream of the test's own on `port` (the machine's `nats-server`, with
 * extra `args` and `env`, e.g. `-c` a configuration and the passwords it reads), resolved once it
 * accepts clients: for tests that stop NATS or need a configuration, which must never touch the
 * machine's shared one. Its JetStream store is a new temporary directory, removed when the
 * server exits, so a server started again on the same port starts without the streams of the last.
 */
export async function startNatsServer(
  port: number,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  // In memory where the machine has /dev/shm: the disk, busy with the test databases, never
  // holds up the server's writes of its streams' files.
  const storeDir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'parley-nats-'));
  const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const removeStore = () => rmSync(storeDir, { recursive: true, force: true });
  child.once('exit', removeStore);
  child.once('error', removeStore);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      out += String(chunk);
      if (out.includes('Server is ready')) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${out}`)));
  });
  return child;
}

/** Kills `child` (SIGKILL) and waits for it to exit; nothing when it has already. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

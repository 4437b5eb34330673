import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback port free right now, for a child process that must be told its port up front. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
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

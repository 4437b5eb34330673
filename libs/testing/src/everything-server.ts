import { spawn, execFileSync, type ChildProcess } from 'node:child_process';

/** The reference MCP server from npm, run with the current Node executable. */
export const EVERYTHING_BIN = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** server-everything in one of its HTTP modes on a loopback port; resolves once it listens. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse', port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING_BIN, mode], {
    env: { PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const listening = /listening on port|running on port/i;
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start: ${seen}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (listening.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything ${mode} exited with ${code}: ${seen}`));
    });
  });
  child.stderr!.resume();
  return child;
}

/** Child processes of this (Jest worker) process running server-everything. */
export function everythingChildren(): number[] {
  return children()
    .filter((line) => line.includes('server-everything'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** True once `pid` is neither running nor a zombie waiting to be reaped by this process. */
export function isGone(pid: number): boolean {
  return !children().some((line) => Number(line.trim().split(/\s+/)[0]) === pid);
}

function children(): string[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    // ps exits with 1 when no process matches.
  }
  return out.trim().split('\n').filter(Boolean);
}

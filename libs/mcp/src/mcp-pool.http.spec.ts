import type { ChildProcess } from 'node:child_process';
import { Logger } from '@nestjs/common';
import type { McpClientConfig } from './mcp-client-config';
import { McpPool } from './mcp-pool';
import { freePort, killProcess, startEverythingHttp } from '@parley/testing';

const call = { timeoutMs: 10_000 };

describe.each([
  { mode: 'streamableHttp' as const, transport: 'SH' as const, path: '/mcp' },
  { mode: 'sse' as const, transport: 'SE' as const, path: '/sse' },
])('McpPool over $mode (server-everything on a loopback port)', ({ mode, transport, path }) => {
  let port: number;
  let server: ChildProcess;
  let pool: McpPool;

  beforeAll(() => Logger.overrideLogger(['error']));

  beforeEach(async () => {
    port = await freePort();
    server = await startEverythingHttp(mode, port);
    const config: McpClientConfig = { name: 'everything', transport, url: `http://127.0.0.1:${port}${path}` };
    pool = new McpPool({ configFor: async () => config });
  });

  afterEach(async () => {
    await pool.close();
    await killProcess(server);
  });

  it('lists the tools and calls echo and get-sum', async () => {
    const tools = await pool.listTools('everything');
    expect(tools.map((t) => t.ref)).toEqual(expect.arrayContaining(['everything/echo', 'everything/get-sum']));
    expect((await pool.callTool('everything', 'echo', { message: mode }, call)).content).toBe(`Echo: ${mode}`);
    expect((await pool.callTool('everything', 'get-sum', { a: 1, b: 2 }, call)).content).toBe(
      'The sum of 1 and 2 is 3.',
    );
  });

  it('reconnects to a server restarted between two calls', async () => {
    expect((await pool.callTool('everything', 'echo', { message: 'one' }, call)).content).toBe('Echo: one');
    await killProcess(server);
    server = await startEverythingHttp(mode, port);
    expect((await pool.callTool('everything', 'echo', { message: 'two' }, call)).content).toBe('Echo: two');
  });

  it('reconnects when the server comes back while the next call is already waiting', async () => {
    await pool.callTool('everything', 'echo', { message: 'one' }, call);
    await killProcess(server);
    // Let the client see its event stream drop, so the call below opens a new session while the
    // port is closed and has to back off until the server is back.
    await new Promise((r) => setTimeout(r, 300));
    const pending = pool.callTool('everything', 'echo', { message: 'two' }, call);
    server = await startEverythingHttp(mode, port);
    expect((await pending).content).toBe('Echo: two');
  });
});

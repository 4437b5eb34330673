import { Logger } from '@nestjs/common';
import { McpClientError } from './mcp-client.error';
import type { McpClientConfig, McpClientConfigSource } from './mcp-client-config';
import { McpPool } from './mcp-pool';
import { EVERYTHING_BIN, everythingChildren, isGone } from '@parley/testing';

const configs: Record<string, McpClientConfig> = {
  everything: { name: 'everything', transport: 'ST', command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
};
const source: McpClientConfigSource = {
  configFor: async (name) => {
    opened.push(name);
    return configs[name];
  },
};
let opened: string[] = [];
const call = { timeoutMs: 10_000 };

describe('McpPool over stdio (server-everything)', () => {
  let pool: McpPool;

  beforeAll(() => Logger.overrideLogger(['error']));

  beforeEach(() => {
    opened = [];
    pool = new McpPool(source);
  });

  afterEach(async () => {
    await pool.close();
  });

  it('lists the server tools under function names the model accepts', async () => {
    const tools = await pool.listTools('everything');
    const echo = tools.find((t) => t.ref === 'everything/echo');
    expect(echo).toMatchObject({ name: 'everything__echo', kind: 'mcp', description: 'Echoes back the input string' });
    expect(echo?.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(tools.find((t) => t.ref === 'everything/get-sum')?.name).toBe('everything__get-sum');
    for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('calls echo and get-sum and returns their text', async () => {
    await expect(pool.callTool('everything', 'echo', { message: 'hello' }, call)).resolves.toEqual({
      isError: false,
      content: 'Echo: hello',
    });
    await expect(pool.callTool('everything', 'get-sum', { a: 2, b: 40 }, call)).resolves.toEqual({
      isError: false,
      content: 'The sum of 2 and 40 is 42.',
    });
  });

  it('opens one server process for concurrent first calls and reuses it', async () => {
    const results = await Promise.all(
      ['a', 'b', 'c'].map((m) => pool.callTool('everything', 'echo', { message: m }, call)),
    );
    expect(results.map((r) => r.content)).toEqual(['Echo: a', 'Echo: b', 'Echo: c']);
    await pool.callTool('everything', 'echo', { message: 'd' }, call);
    expect(opened).toEqual(['everything']);
    expect(everythingChildren()).toHaveLength(1);
  });

  it('respawns a server that was killed between two calls', async () => {
    await pool.callTool('everything', 'echo', { message: 'before' }, call);
    const [pid] = everythingChildren();
    process.kill(pid, 'SIGKILL');
    await waitFor(() => isGone(pid));
    const after = await pool.callTool('everything', 'echo', { message: 'after' }, call);
    expect(after.content).toBe('Echo: after');
    expect(everythingChildren()).not.toContain(pid);
    expect(everythingChildren()).toHaveLength(1);
  });

  it('leaves no server process behind once closed', async () => {
    await pool.callTool('everything', 'echo', { message: 'x' }, call);
    expect(everythingChildren()).toHaveLength(1);
    await pool.close();
    await waitFor(() => everythingChildren().length === 0);
    expect(everythingChildren()).toEqual([]);
    await expect(pool.callTool('everything', 'echo', { message: 'y' }, call)).rejects.toBeInstanceOf(McpClientError);
  });

  it('fails a call that outlives its timeout with a TIMEOUT error', async () => {
    const slow = pool.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 5, steps: 1 },
      { timeoutMs: 300 },
    );
    await expect(slow).rejects.toMatchObject({ code: 'TIMEOUT', kind: 'timeout' });
    expect((await pool.callTool('everything', 'echo', { message: 'still up' }, call)).content).toBe('Echo: still up');
  });

  it('stops waiting for a call when its signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const slow = pool.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 5, steps: 1 },
      { timeoutMs: 10_000, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 200);
    await expect(slow).rejects.toMatchObject({ kind: 'aborted' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('reports a server that cannot be started as unreachable', async () => {
    configs.broken = { name: 'broken', transport: 'ST', command: '/nonexistent/mcp-server' };
    await expect(pool.callTool('broken', 'echo', {}, call)).rejects.toMatchObject({
      kind: 'connect',
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

import { Logger } from '@nestjs/common';
import type { McpClientConfig, McpErrorKind } from './mcp-client-config';
import { McpPool } from './mcp-pool';
import { TinyMcpServer } from './testing/tiny-mcp-server';

const call = { timeoutMs: 5_000 };

describe('McpPool against a server that changes at runtime', () => {
  let server: TinyMcpServer;
  let pool: McpPool;
  let errors: Array<[string, McpErrorKind]>;

  beforeAll(() => Logger.overrideLogger(['error']));

  beforeEach(async () => {
    server = await new TinyMcpServer().start();
    const config: McpClientConfig = { name: 'tiny', transport: 'SH', url: server.url };
    errors = [];
    pool = new McpPool({ configFor: async () => config }, { error: (name, kind) => errors.push([name, kind]) });
  });

  afterEach(async () => {
    await pool.close();
    await server.stop();
  });

  it('refreshes its cached tool list when the server announces a change', async () => {
    expect((await pool.listTools('tiny')).map((t) => t.name)).toEqual(['tiny__fail']);
    server.addTool('weather', 'sunny');
    await waitFor(async () => (await pool.listTools('tiny')).length === 2);
    expect((await pool.listTools('tiny')).map((t) => t.name)).toEqual(['tiny__fail', 'tiny__weather']);
    expect(await pool.callTool('tiny', 'weather', {}, call)).toEqual({ isError: false, content: 'sunny' });
  });

  it('does not take a server’s idempotentHint as leave to run a call again after a crash', async () => {
    const [fail] = await pool.listTools('tiny');
    expect(fail).toMatchObject({ name: 'tiny__fail', idempotent: false });
  });

  it('re-initializes and retries once when the server no longer knows the session', async () => {
    await pool.callTool('tiny', 'fail', { reason: 'first' }, call);
    server.forgetSessions();
    expect(server.sessionCount).toBe(0);
    const result = await pool.callTool('tiny', 'fail', { reason: 'second' }, call);
    expect(result).toEqual({ isError: true, content: 'failed: second' });
    expect(server.sessionCount).toBe(1);
    expect(errors).toEqual([['tiny', 'session_lost']]);
  });

  it('returns a result flagged isError as data, not as an exception', async () => {
    await expect(pool.callTool('tiny', 'fail', { reason: 'no stock' }, call)).resolves.toEqual({
      isError: true,
      content: 'failed: no stock',
    });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

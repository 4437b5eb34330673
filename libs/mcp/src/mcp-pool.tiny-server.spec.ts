import { Logger } from '@nestjs/common';
import { getEventListeners } from 'node:events';
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

  it('re-initializes and retries once when the server no longer knows the session', async () => {
    await pool.callTool('tiny', 'fail', { reason: 'first' }, call);
    server.forgetSessions();
    expect(server.sessionCount).toBe(0);
    const result = await pool.callTool('tiny', 'fail', { reason: 'second' }, call);
    expect(result).toEqual({ isError: true, content: 'failed: second' });
    expect(server.sessionCount).toBe(1);
    expect(errors).toEqual([['tiny', 'session_lost']]);
  });

  it('leaves no abort listener on the caller’s signal once a call or a tool list is done', async () => {
    const turn = new AbortController();
    const signals: AbortSignal[] = [];
    for (let i = 0; i < 5; i++) {
      const signal = AbortSignal.any([turn.signal, AbortSignal.timeout(60_000)]);
      signals.push(signal);
      await pool.callTool('tiny', 'fail', { reason: `call ${i}` }, { ...call, signal });
    }
    server.addTool('weather', 'sunny');
    await waitFor(async () => (await pool.listTools('tiny', { signal: signals[0] })).length === 2);
    for (const signal of signals) expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('still cancels a call when the caller’s signal aborts', async () => {
    const turn = new AbortController();
    server.addTool('slow', 'late', 2_000);
    const pending = pool.callTool('tiny', 'slow', {}, { ...call, signal: turn.signal });
    setTimeout(() => turn.abort(new Error('killed')), 100);
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
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

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
    expect((await pool.listTools('tiny')).map((t) => t.name)).toEqual(['tiny__fail', 'tiny__wait']);
    server.addTool('weather', 'sunny');
    await waitFor(async () => (await pool.listTools('tiny')).length === 3);
    expect((await pool.listTools('tiny')).map((t) => t.name)).toEqual(['tiny__fail', 'tiny__wait', 'tiny__weather']);
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

  it('tells the server to cancel a call whose signal fires while it runs', async () => {
    const controller = new AbortController();
    const pending = pool.callTool('tiny', 'wait', { ms: 5_000 }, { ...call, signal: controller.signal });
    await waitFor(async () => server.received.includes('tools/call'));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
    await waitFor(async () => server.received.includes('notifications/cancelled'));
  });

  it('sends nothing more for a call that has answered when its signal fires later', async () => {
    // The tool call's timeout signal always fires, long after a quick answer; so may a turn's.
    const controller = new AbortController();
    await pool.callTool('tiny', 'wait', { ms: 1 }, { ...call, signal: controller.signal });
    controller.abort();
    expect(await pool.callTool('tiny', 'wait', { ms: 50 }, call)).toEqual({ isError: false, content: 'waited 50 ms' });
    expect(server.received.filter((m) => m !== 'notifications/initialized')).toEqual([
      'initialize',
      'tools/call',
      'tools/call',
    ]);
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
    await waitFor(async () =>
      (await pool.listTools('tiny', { signal: signals[0] })).some((t) => t.name === 'tiny__weather'),
    );
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

  it("returns a tool's structured content that matches its outputSchema, and an error for one that does not", async () => {
    server.addStructuredTool('count', { n: 3 });
    server.addStructuredTool('miscount', { n: 'three' });
    await pool.listTools('tiny');
    expect(await pool.callTool('tiny', 'count', {}, call)).toEqual({ isError: false, content: '{"n":3}' });
    // An SDK server refuses its own mismatched output; the model reads it as the call's error.
    await expect(pool.callTool('tiny', 'miscount', {}, call)).resolves.toEqual({
      isError: true,
      content: expect.stringMatching(/Output validation error: .*expected number, received string at n/),
    });
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

import { Injectable, Logger } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { EVERYTHING_BIN } from '@parley/testing';
import { ParleyTool } from './registry/parley-tool.decorator';
import { ToolRegistry } from './registry/tool-registry';
import { callContext, toolDef, toolsTestApp, type FakeCatalog } from './testing/tools-test-app';
import { ToolExecutor } from './tool-executor';
import { TOOL_METRICS } from './tool-outcome';

@ParleyTool({ name: 'shout', description: 'Upper-cases a text' })
@Injectable()
class ShoutTool {
  execute(args: Record<string, unknown>) {
    if (args.text === 'boom') throw new Error('the shouting failed');
    return String(args.text).toUpperCase();
  }
}

const textSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const metrics: Array<[string, string]> = [];

describe('ToolExecutor', () => {
  let app: INestApplicationContext;
  let catalog: FakeCatalog;
  let executor: ToolExecutor;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ app, catalog } = await toolsTestApp({
      providers: [
        ShoutTool,
        { provide: TOOL_METRICS, useValue: { toolCall: (kind: string, r: string) => metrics.push([kind, r]) } },
      ],
    }));
    executor = app.get(ToolExecutor);
    catalog.tools.set('SHOUT', { kind: 'in_process', beanName: 'shout' });
    catalog.tools.set('ORDER', { kind: 'in_process', beanName: 'orderStatus' });
    catalog.mcpClients.set('everything', {
      name: 'everything',
      transport: 'ST',
      command: process.execPath,
      args: [EVERYTHING_BIN, 'stdio'],
    });
  });

  afterAll(async () => {
    await app.close();
  });

  const shout = toolDef({ name: 'shout', kind: 'in_process', ref: 'SHOUT', parameters: textSchema });

  it('runs an in-process tool found by its @ParleyTool name', async () => {
    const outcome = await executor.execute(shout, '{"text":"hi"}', callContext());
    expect(outcome).toMatchObject({
      ok: true,
      output: 'HI',
      truncated: false,
      returnDirect: false,
      skipResponse: false,
    });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(metrics).toContainEqual(['in_process', 'ok']);
  });

  it('runs the built-in orderStatus tool deterministically', async () => {
    const def = toolDef({ name: 'order_status', kind: 'in_process', ref: 'ORDER' });
    const first = await executor.execute(def, '{"orderId":"A-1001"}', callContext());
    const again = await executor.execute(def, '{"orderId":"A-1001"}', callContext());
    expect(first.ok && JSON.parse(first.output)).toMatchObject({ orderId: 'A-1001', status: 'shipped' });
    expect(first.ok && JSON.parse(first.output).eta).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(again).toMatchObject({ ok: true, output: first.ok ? first.output : '' });
  });

  it('checks the output against the tool’s output schema: a mismatch or a non-JSON text is INVALID_OUTPUT', async () => {
    const order = toolDef({ name: 'order_status', kind: 'in_process', ref: 'ORDER' });
    const shipped = { type: 'object', properties: { status: { enum: ['shipped', 'pending'] } }, required: ['status'] };
    const matching = await executor.execute({ ...order, outputSchema: shipped }, '{"orderId":"A-1001"}', callContext());
    expect(matching).toMatchObject({ ok: true });

    const needsRefund = { ...shipped, required: ['status', 'refund'] };
    const missing = await executor.execute(
      { ...order, outputSchema: needsRefund },
      '{"orderId":"A-1001"}',
      callContext(),
    );
    expect(missing).toMatchObject({ ok: false, error: { code: 'INVALID_OUTPUT' } });
    expect(!missing.ok && missing.error.message).toMatch(/does not match its output schema:\n.*refund/);

    const notJson = await executor.execute({ ...shout, outputSchema: shipped }, '{"text":"hi"}', callContext());
    expect(notJson).toMatchObject({ ok: false, error: { code: 'INVALID_OUTPUT' } });
    expect(!notJson.ok && notJson.error.message).toMatch(/not JSON/);
    expect(metrics).toContainEqual(['in_process', 'INVALID_OUTPUT']);
  });

  it('carries the returnDirect and skipResponse flags of the definition', async () => {
    const def = { ...shout, returnDirect: true, skipResponse: true };
    expect(await executor.execute(def, '{"text":"x"}', callContext())).toMatchObject({
      returnDirect: true,
      skipResponse: true,
    });
  });

  it('turns a throwing tool into a TOOL_ERROR the model can read', async () => {
    const outcome = await executor.execute(shout, '{"text":"boom"}', callContext());
    expect(outcome).toMatchObject({ ok: false, error: { code: 'TOOL_ERROR', message: 'the shouting failed' } });
    expect(metrics).toContainEqual(['in_process', 'TOOL_ERROR']);
  });

  it('stops waiting for a programmatically registered tool at the timeout', async () => {
    app.get(ToolRegistry).register('slow', { execute: () => new Promise((r) => setTimeout(() => r('late'), 2_000)) });
    catalog.tools.set('SLOW', { kind: 'in_process', beanName: 'slow' });
    const def = toolDef({ name: 'slow', kind: 'in_process', ref: 'SLOW' });
    const outcome = await executor.execute(def, '{}', callContext({ timeoutMs: 150 }));
    expect(outcome).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
    expect(outcome.durationMs).toBeLessThan(1_000);
  });

  it('reports an aborted call as ABORTED', async () => {
    const controller = new AbortController();
    const def = toolDef({ name: 'slow', kind: 'in_process', ref: 'SLOW' });
    setTimeout(() => controller.abort(), 50);
    const outcome = await executor.execute(def, '{}', callContext({ signal: controller.signal }));
    expect(outcome).toMatchObject({ ok: false, error: { code: 'ABORTED' } });
  });

  it('cuts output over the size limit and marks it', async () => {
    const outcome = await executor.execute(
      shout,
      JSON.stringify({ text: 'a'.repeat(300) }),
      callContext({ maxOutputBytes: 100 }),
    );
    expect(outcome).toMatchObject({ ok: true, truncated: true });
    expect(outcome.ok && outcome.output).toBe(`${'A'.repeat(100)}\n…[truncated: 300 bytes total]`);
  });

  it('refuses kinds the turn loop handles itself', async () => {
    const ask = toolDef({ name: 'AskUserQuestion', kind: 'ask_user_question', ref: 'ask' });
    expect(await executor.execute(ask, '{}', callContext())).toMatchObject({
      ok: false,
      error: { code: 'NOT_ALLOWED' },
    });
  });

  it('reports a tool missing from the catalog as UNAVAILABLE', async () => {
    const ghost = toolDef({ name: 'ghost', kind: 'in_process', ref: 'GHOST' });
    expect(await executor.execute(ghost, '{}', callContext())).toMatchObject({
      ok: false,
      error: { code: 'UNAVAILABLE' },
    });
  });

  describe.each([
    { kind: 'in_process' as const, ref: 'SHOUT' },
    { kind: 'http' as const, ref: 'HTTP' },
    { kind: 'emitter' as const, ref: 'EMIT' },
    { kind: 'mcp' as const, ref: 'everything/echo' },
  ])('for a $kind tool', ({ kind, ref }) => {
    const def = toolDef({ name: `t_${kind}`, kind, ref, parameters: textSchema });

    it('rejects arguments that do not match the schema, naming the paths, before running anything', async () => {
      const outcome = await executor.execute(def, '{"text":5}', callContext());
      expect(outcome).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS' } });
      expect(!outcome.ok && outcome.error.message).toContain('- /text: must be string');
    });

    it('rejects malformed JSON arguments', async () => {
      const outcome = await executor.execute(def, '{"text":', callContext());
      expect(outcome).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS' } });
    });
  });

  describe('for MCP tools', () => {
    it('calls the server through the pool', async () => {
      const def = toolDef({ name: 'everything__echo', kind: 'mcp', ref: 'everything/echo' });
      expect(await executor.execute(def, '{"message":"via executor"}', callContext())).toMatchObject({
        ok: true,
        output: 'Echo: via executor',
      });
    });

    it('turns a server-side error into a TOOL_ERROR with the server text', async () => {
      const def = toolDef({ name: 'everything__nope', kind: 'mcp', ref: 'everything/no-such-tool' });
      const outcome = await executor.execute(def, '{}', callContext());
      expect(outcome).toMatchObject({ ok: false, error: { code: 'TOOL_ERROR' } });
      expect(!outcome.ok && outcome.error.message).toMatch(/no-such-tool/);
    });

    it('reports a slow MCP tool as TIMEOUT', async () => {
      const def = toolDef({ name: 'slow', kind: 'mcp', ref: 'everything/trigger-long-running-operation' });
      const outcome = await executor.execute(def, '{"duration":5,"steps":1}', callContext({ timeoutMs: 300 }));
      expect(outcome).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
    });
  });
});

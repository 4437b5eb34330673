import { startSimulator, until, type Simulator } from '@parley/testing';
import { LlmError } from './llm-error';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { collect, failureOf, requestFor } from './llm.spec-helpers';

describe('OpenAiCompatibleAdapter failures', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();
  const fail = (options: Parameters<typeof adapter.stream>[1] = {}) =>
    failureOf(() => collect(adapter.stream(requestFor(sim, 'hi'), options))) as Promise<LlmError>;

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it.each([
    [429, 'rate_limited', true],
    [503, 'overloaded', true],
    [500, 'server_error', true],
    [502, 'server_error', true],
    [504, 'server_error', true],
    [400, 'bad_request', false],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'not_found', false],
  ] as const)('maps HTTP %i to %s (retryable: %s)', async (status, kind, retryable) => {
    sim.script([{ reply: { fail: { status } } }]);
    const error = await fail();
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind, retryable, status });
  });

  it('reads Retry-After from a 429', async () => {
    sim.script([{ reply: { fail: { status: 429, retryAfterMs: 1500 } } }]);
    expect(await fail()).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1500 });
  });

  it('recognises an exceeded context window as its own kind, not retryable', async () => {
    sim.script([{ reply: { fail: { status: 400, code: 'context_length_exceeded', message: 'Too long.' } } }]);
    expect(await fail()).toMatchObject({ kind: 'context_length', retryable: false });
  });

  it('times out a request that never answers', async () => {
    sim.script([{ reply: { hang: true } }]);
    const started = Date.now();
    expect(await fail({ timeoutMs: 200 })).toMatchObject({ kind: 'timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('times out a stream that goes silent between chunks', async () => {
    sim.script([{ reply: { text: 'This reply will stall halfway through.', stallAfterChunks: 3 } }]);
    const error = await fail({ idleTimeoutMs: 150 });
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.message).toContain('nothing for 150 ms');
  });

  it('reports a stream cut mid-way as interrupted and retryable', async () => {
    sim.script([{ reply: { text: 'This reply is cut off before it ends.', cutAfterChunks: 3 } }]);
    expect(await fail()).toMatchObject({ kind: 'stream_interrupted', retryable: true });
  });

  it('reports an error event sent mid-stream as a retryable server error', async () => {
    sim.script([{ reply: { text: 'This reply fails after a few chunks.', errorAfterChunks: 3 } }]);
    expect(await fail()).toMatchObject({ kind: 'server_error', retryable: true });
  });

  it('reports a refused connection as retryable', async () => {
    const gone = await startSimulator();
    await gone.close();
    const error = (await failureOf(() => collect(adapter.stream(requestFor(gone, 'hi'))))) as LlmError;
    expect(error).toMatchObject({ kind: 'connection', retryable: true });
  });

  it('stops an in-flight stream within a second of the abort, not retryable', async () => {
    sim.setLatency(300);
    sim.script([{ reply: { text: 'A slow reply that would take many seconds to stream out completely.' } }]);
    const controller = new AbortController();
    const seen: string[] = [];
    let abortedAt = 0;
    const error = await failureOf(async () => {
      for await (const event of adapter.stream(requestFor(sim, 'hi'), { signal: controller.signal })) {
        if (event.type === 'text') seen.push(event.delta);
        if (seen.length === 2) {
          abortedAt = Date.now();
          setImmediate(() => controller.abort());
        }
      }
    });
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(seen.join('')).not.toBe('A slow reply that would take many seconds to stream out completely.');
  });

  it('closes the request of a caller that stops reading, and reports nothing as failed', async () => {
    sim.setLatency(300);
    sim.script([{ reply: { text: 'A slow reply that would take many seconds to stream out completely.' } }]);
    const seen: string[] = [];
    for await (const event of adapter.stream(requestFor(sim, 'hi'))) {
      if (event.type === 'text') seen.push(event.delta);
      if (seen.length === 2) break;
    }
    expect(seen).toHaveLength(2);
    await until(() => sim.openRequests === 0, 1000);
  });

  it('aborts a request still waiting for its response', async () => {
    sim.script([{ reply: { hang: true } }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await fail({ signal: controller.signal })).toMatchObject({ kind: 'aborted', retryable: false });
  });
});

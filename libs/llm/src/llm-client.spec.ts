import { startSimulator, type Simulator } from '@parley/testing';
import { BreakerRegistry } from './breaker-registry';
import { LlmClient, type LlmCallHooks } from './llm-client';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { failureOf, requestFor } from './llm.spec-helpers';

describe('LlmClient', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();
  const clientWith = (breakers = new BreakerRegistry()) => new LlmClient(adapter, breakers, { baseDelayMs: 5 });

  /** Hooks that log what a turn loop would record. */
  function recorder() {
    const log: string[] = [];
    const hooks: LlmCallHooks = {
      onAttemptStart: (attempt) => void log.push(`start ${attempt}`),
      onAttemptFailed: (error, { attempt, willRetry }) =>
        void log.push(`failed ${attempt} ${error.kind} ${willRetry ? 'retry' : 'final'}`),
    };
    return { log, hooks };
  }

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it('waits at least the Retry-After of a 429 before the next attempt', async () => {
    sim.script([
      { reply: { fail: { status: 429, retryAfterMs: 300 } }, times: 1 },
      { reply: { text: 'Now it works.' } },
    ]);
    const delays: number[] = [];
    const result = await clientWith().call(requestFor(sim, 'hi'), {
      hooks: { onAttemptFailed: (_error, { delayMs }) => void delays.push(delayMs) },
    });
    expect(result).toMatchObject({ text: 'Now it works.', attempts: 2 });
    expect(delays).toEqual([300]);
    expect(sim.requests[1].receivedAt - sim.requests[0].receivedAt).toBeGreaterThanOrEqual(300);
  });

  it('succeeds on the third attempt after two 503s, recording each attempt', async () => {
    sim.script([{ reply: { fail: { status: 503 } }, times: 2 }, { reply: { text: 'Third time lucky.' } }]);
    const { log, hooks } = recorder();
    const result = await clientWith().call(requestFor(sim, 'hi'), { attempts: 3, hooks });
    expect(result).toMatchObject({ text: 'Third time lucky.', finishReason: 'ST', attempts: 3 });
    expect(log).toEqual(['start 1', 'failed 1 overloaded retry', 'start 2', 'failed 2 overloaded retry', 'start 3']);
    expect(sim.requests).toHaveLength(3);
  });

  it('fails with the last error after the configured attempts when the provider stays down', async () => {
    sim.script([{ reply: { fail: { status: 503, message: 'Still overloaded.' } } }]);
    const { log, hooks } = recorder();
    const error = await failureOf(() => clientWith().call(requestFor(sim, 'hi'), { attempts: 3, hooks }));
    expect(error).toMatchObject({
      kind: 'overloaded',
      status: 503,
      message: expect.stringContaining('Still overloaded.'),
    });
    expect(sim.requests).toHaveLength(3);
    expect(log.at(-1)).toBe('failed 3 overloaded final');
  });

  it('does not retry an error that is not retryable', async () => {
    sim.script([{ reply: { fail: { status: 400 } } }]);
    const { log, hooks } = recorder();
    await expect(clientWith().call(requestFor(sim, 'hi'), { hooks })).rejects.toMatchObject({ kind: 'bad_request' });
    expect(sim.requests).toHaveLength(1);
    expect(log).toEqual(['start 1', 'failed 1 bad_request final']);
  });

  it('restarts a cut stream from scratch, telling the caller which attempt each delta belongs to', async () => {
    sim.script([
      { reply: { text: 'The full answer arrives on the second try.', cutAfterChunks: 4 }, times: 1 },
      { reply: { text: 'The full answer arrives on the second try.' } },
    ]);
    let kept = '';
    const result = await clientWith().call(requestFor(sim, 'hi'), {
      hooks: {
        onAttemptStart: () => void (kept = ''),
        onEvent: (event) => void (event.type === 'text' && (kept += event.delta)),
      },
    });
    expect(result).toMatchObject({ text: 'The full answer arrives on the second try.', attempts: 2 });
    expect(kept).toBe(result.text);
  });

  it('retries a call that timed out', async () => {
    sim.script([{ reply: { hang: true }, times: 1 }, { reply: { text: 'Faster now.' } }]);
    const result = await clientWith().call(requestFor(sim, 'hi'), { timeoutMs: 150 });
    expect(result).toMatchObject({ text: 'Faster now.', attempts: 2 });
  });

  it('opens the breaker after consecutive failures, then lets a call through after the cool-down', async () => {
    const breakers = new BreakerRegistry({ threshold: 2, halfOpenAfterMs: 150 });
    const client = clientWith(breakers);
    sim.script([{ reply: { fail: { status: 503 } }, times: 2 }, { reply: { text: 'Back up.' } }]);
    await expect(client.call(requestFor(sim, 'hi'), { attempts: 2 })).rejects.toMatchObject({ kind: 'overloaded' });
    expect(breakers.state('SIM')).toBe('open');
    await expect(client.call(requestFor(sim, 'hi'))).rejects.toMatchObject({ kind: 'circuit_open', retryable: false });
    expect(sim.requests).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 160));
    await expect(client.call(requestFor(sim, 'hi'))).resolves.toMatchObject({ text: 'Back up.' });
    expect(breakers.state('SIM')).toBe('closed');
  });
});

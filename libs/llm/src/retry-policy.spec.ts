import { LlmError } from './llm-error';
import { retryDelay, withRetries, type RetryInfo } from './retry-policy';

const overloaded = () => new LlmError('overloaded', 'busy', { status: 503 });

describe('retryDelay', () => {
  it('grows exponentially with full jitter below the ceiling', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 10_000 };
    expect(retryDelay(1, overloaded(), { ...options, random: () => 1 })).toBe(100);
    expect(retryDelay(3, overloaded(), { ...options, random: () => 1 })).toBe(400);
    expect(retryDelay(3, overloaded(), { ...options, random: () => 0.5 })).toBe(200);
  });

  it('waits at least the Retry-After and never more than the cap', () => {
    const rateLimited = new LlmError('rate_limited', 'slow down', { retryAfterMs: 700 });
    expect(retryDelay(1, rateLimited, { baseDelayMs: 100, maxDelayMs: 10_000, random: () => 0 })).toBe(700);
    expect(retryDelay(1, rateLimited, { baseDelayMs: 100, maxDelayMs: 300, random: () => 0 })).toBe(300);
  });
});

describe('withRetries', () => {
  it('succeeds on the third attempt after two retryable failures', async () => {
    const retries: RetryInfo[] = [];
    let calls = 0;
    const result = await withRetries(
      async (attempt) => {
        calls += 1;
        if (attempt < 3) throw overloaded();
        return 'ok';
      },
      { attempts: 3, baseDelayMs: 1, onRetry: (info) => void retries.push(info) },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('throws the last error after the configured attempts', async () => {
    let calls = 0;
    const failure = withRetries(
      async (attempt) => {
        calls += 1;
        throw new LlmError('overloaded', `busy ${attempt}`);
      },
      { attempts: 4, baseDelayMs: 1 },
    );
    await expect(failure).rejects.toThrow('busy 4');
    expect(calls).toBe(4);
  });

  it('does not retry an error that is not retryable', async () => {
    let calls = 0;
    const failure = withRetries(async () => {
      calls += 1;
      throw new LlmError('bad_request', 'no');
    });
    await expect(failure).rejects.toMatchObject({ kind: 'bad_request' });
    expect(calls).toBe(1);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const failure = withRetries(
      async () => {
        throw overloaded();
      },
      { baseDelayMs: 60_000, random: () => 1, signal: controller.signal, onRetry: () => controller.abort() },
    );
    await expect(failure).rejects.toMatchObject({ kind: 'aborted', retryable: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

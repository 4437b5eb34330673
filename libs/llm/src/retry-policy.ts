import { setTimeout as sleep } from 'node:timers/promises';
import { LlmError } from './llm-error';

export interface RetryInfo {
  /** The attempt that failed (1-based). */
  attempt: number;
  error: LlmError;
  /** How long until the next attempt. */
  delayMs: number;
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  attempts?: number;
  /** The backoff's first step (default 500 ms), doubled at each attempt. */
  baseDelayMs?: number;
  /** No wait is longer, Retry-After included (default 30 s). */
  maxDelayMs?: number;
  signal?: AbortSignal;
  /** Awaited before the wait, so a caller can record the retry before it happens. */
  onRetry?: (info: RetryInfo) => void | Promise<void>;
  random?: () => number;
}

export const RETRY_DEFAULTS = { attempts: 3, baseDelayMs: 500, maxDelayMs: 30_000 } as const;

/** Exponential backoff with full jitter, never shorter than the provider's Retry-After, capped. */
export function retryDelay(
  attempt: number,
  error: LlmError,
  options: { baseDelayMs: number; maxDelayMs: number; random?: () => number },
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  const jittered = Math.round((options.random ?? Math.random)() * ceiling);
  return Math.min(options.maxDelayMs, Math.max(jittered, error.retryAfterMs ?? 0));
}

/**
 * Runs `attemptFn` until it succeeds, fails with an error that is not a retryable LlmError,
 * or runs out of attempts (then the last error is thrown). The signal cancels the wait.
 *
 * Written here rather than with cockatiel's retry: its retry events are fire-and-forget,
 * and the turn loop must have appended ModelCallRetryScheduled before the next attempt starts.
 */
export async function withRetries<T>(
  attemptFn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? RETRY_DEFAULTS.attempts);
  const delays = {
    baseDelayMs: options.baseDelayMs ?? RETRY_DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs,
    random: options.random,
  };
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new LlmError('aborted', 'The model call was aborted.');
    try {
      return await attemptFn(attempt);
    } catch (err) {
      if (!(err instanceof LlmError) || !err.retryable || attempt >= attempts) throw err;
      const delayMs = retryDelay(attempt, err, delays);
      await options.onRetry?.({ attempt, error: err, delayMs });
      try {
        await sleep(delayMs, undefined, { signal: options.signal });
      } catch (abort) {
        throw new LlmError('aborted', 'The model call was aborted while waiting to retry.', { cause: abort });
      }
    }
  }
}

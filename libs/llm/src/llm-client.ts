import { stripUndefined, type FinishReason } from '@parley/core';
import type { BreakerRegistry } from './breaker-registry';
import { LlmError } from './llm-error';
import type { LlmCallOptions, LlmPort, LlmRequest, LlmStreamEvent, LlmToolCall, LlmUsage } from './llm.port';
import { RETRY_DEFAULTS, withRetries } from './retry-policy';

export interface LlmAttemptFailure {
  attempt: number;
  willRetry: boolean;
  /** Wait before the next attempt (0 when none follows). */
  delayMs: number;
}

/** Where a caller records each attempt (the turn loop appends ModelCall* events here). */
export interface LlmCallHooks {
  /** Before each attempt. A retried stream restarts from scratch: drop the failed attempt's deltas here. */
  onAttemptStart?(attempt: number): void | Promise<void>;
  onEvent?(event: LlmStreamEvent, attempt: number): void | Promise<void>;
  onAttemptFailed?(error: LlmError, failure: LlmAttemptFailure): void | Promise<void>;
}

export interface LlmCallSettings extends LlmCallOptions {
  /** Attempts in all (the configuration's llmRetryCount; default from the app config). */
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  hooks?: LlmCallHooks;
}

export type LlmClientDefaults = Omit<LlmCallSettings, 'hooks' | 'signal'>;

/** The whole reply of the attempt that succeeded. */
export interface LlmCallResult {
  text: string;
  reasoning: string;
  toolCalls: LlmToolCall[];
  finishReason: FinishReason;
  usage: LlmUsage;
  responseModel: string | null;
  /** The attempt that succeeded (1-based). */
  attempts: number;
  latencyMs: number;
}

/** One logical model call: attempts through the provider's breaker, retried with backoff. */
export class LlmClient {
  constructor(
    private readonly port: LlmPort,
    private readonly breakers: BreakerRegistry,
    private readonly defaults: LlmClientDefaults = {},
  ) {}

  async call(request: LlmRequest, settings: LlmCallSettings = {}): Promise<LlmCallResult> {
    const merged = { ...this.defaults, ...stripUndefined(settings) };
    const hooks = settings.hooks ?? {};
    let lastFailure: unknown;
    let lastAttempt = 0;
    try {
      return await withRetries(
        async (attempt) => {
          lastAttempt = attempt;
          await hooks.onAttemptStart?.(attempt);
          try {
            return await this.breakers.execute(request.provider.code, () => this.attempt(request, merged, attempt));
          } catch (err) {
            lastFailure = err;
            throw err;
          }
        },
        {
          attempts: merged.attempts ?? RETRY_DEFAULTS.attempts,
          baseDelayMs: merged.baseDelayMs,
          maxDelayMs: merged.maxDelayMs,
          signal: settings.signal,
          onRetry: ({ attempt, error, delayMs }) =>
            hooks.onAttemptFailed?.(error, { attempt, willRetry: true, delayMs }),
        },
      );
    } catch (err) {
      if (err === lastFailure && err instanceof LlmError) {
        await hooks.onAttemptFailed?.(err, { attempt: lastAttempt, willRetry: false, delayMs: 0 });
      }
      throw err;
    }
  }

  private async attempt(request: LlmRequest, settings: LlmCallSettings, attempt: number): Promise<LlmCallResult> {
    const startedAt = Date.now();
    let text = '';
    let reasoning = '';
    const toolCalls: LlmToolCall[] = [];
    const { signal, timeoutMs, idleTimeoutMs } = settings;
    for await (const event of this.port.stream(request, { signal, timeoutMs, idleTimeoutMs })) {
      await settings.hooks?.onEvent?.(event, attempt);
      if (event.type === 'text') text += event.delta;
      if (event.type === 'reasoning') reasoning += event.delta;
      if (event.type === 'tool_call') toolCalls.push(event.call);
      if (event.type === 'finish') {
        const { finishReason, usage, responseModel } = event;
        return {
          text,
          reasoning,
          toolCalls,
          finishReason,
          usage,
          responseModel,
          attempts: attempt,
          latencyMs: Date.now() - startedAt,
        };
      }
    }
    throw new LlmError('stream_interrupted', 'The model stream ended without a finish event.');
  }
}

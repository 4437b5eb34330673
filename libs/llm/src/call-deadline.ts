import { LlmError } from './llm-error';
import type { LlmCallOptions } from './llm.port';

type Reason = 'caller' | 'timeout' | 'idle';

/**
 * One signal for the HTTP request that fires on the caller's abort, on the call's deadline
 * or when the server goes quiet for too long, and remembers which, because the SDK reports
 * all three as the same abort.
 */
export class CallDeadline {
  private readonly controller = new AbortController();
  private reason: Reason | null = null;
  private readonly deadline?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.abort('caller');

  constructor(private readonly options: LlmCallOptions) {
    if (options.signal?.aborted) this.abort('caller');
    options.signal?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (options.timeoutMs !== undefined) this.deadline = setTimeout(() => this.abort('timeout'), options.timeoutMs);
    this.armIdle();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Restarts the wait for the next chunk. */
  armIdle(): void {
    this.pauseIdle();
    const ms = this.options.idleTimeoutMs;
    if (ms !== undefined) this.idleTimer = setTimeout(() => this.abort('idle'), ms);
  }

  /** While the caller handles a chunk, its own slowness is not the server's silence. */
  pauseIdle(): void {
    clearTimeout(this.idleTimer);
  }

  /** The error to report if this call was cut short by us or the caller, else null. */
  error(): LlmError | null {
    switch (this.reason) {
      case 'caller':
        return new LlmError('aborted', 'The model call was aborted.');
      case 'timeout':
        return new LlmError('timeout', `The model call took longer than ${this.options.timeoutMs} ms.`);
      case 'idle':
        return new LlmError('timeout', `The model sent nothing for ${this.options.idleTimeoutMs} ms.`);
      default:
        return null;
    }
  }

  /** Ends the request, if still open, without making it a failure of the call (error() stays null). */
  abandon(): void {
    this.controller.abort();
  }

  dispose(): void {
    clearTimeout(this.deadline);
    this.pauseIdle();
    this.options.signal?.removeEventListener('abort', this.onCallerAbort);
  }

  private abort(reason: Reason): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller.abort();
  }
}

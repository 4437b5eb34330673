import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  isBrokenCircuitError,
} from 'cockatiel';
import { LlmError } from './llm-error';

export interface BreakerOptions {
  /** Consecutive retryable failures that open the circuit (default 5). */
  threshold?: number;
  /** How long it stays open before one trial call may pass (default 30 s). */
  halfOpenAfterMs?: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

const STATES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open',
};

/**
 * A circuit breaker per provider code (cockatiel's consecutive breaker). Only retryable
 * failures count: a 400 says the provider is up. While open, calls fail at once with a
 * `circuit_open` LlmError, which is not retried.
 */
export class BreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();

  constructor(private readonly options: BreakerOptions = {}) {}

  async execute<T>(providerCode: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await this.breaker(providerCode).execute(fn);
    } catch (err) {
      if (isBrokenCircuitError(err)) {
        throw new LlmError('circuit_open', `Calls to provider '${providerCode}' are paused after repeated failures.`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  state(providerCode: string): BreakerState {
    const breaker = this.breakers.get(providerCode);
    return breaker ? STATES[breaker.state] : 'closed';
  }

  /** The state of every provider called since the process started, by provider code. */
  states(): Record<string, BreakerState> {
    return Object.fromEntries([...this.breakers.keys()].sort().map((code) => [code, this.state(code)]));
  }

  private breaker(providerCode: string): CircuitBreakerPolicy {
    let breaker = this.breakers.get(providerCode);
    if (!breaker) {
      breaker = circuitBreaker(
        handleWhen((err) => err instanceof LlmError && err.retryable),
        {
          breaker: new ConsecutiveBreaker(this.options.threshold ?? 5),
          halfOpenAfter: this.options.halfOpenAfterMs ?? 30_000,
        },
      );
      this.breakers.set(providerCode, breaker);
    }
    return breaker;
  }
}

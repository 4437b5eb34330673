import { type Redis } from '@parley/platform';
import { DomainError } from '@parley/core';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** The per-address limit of HTTP requests, counted before authentication (a SubjectRateLimiter by IP). */
export const ADDRESS_RATE_LIMITER = Symbol('parley.address-rate-limiter');

export interface RateLimiterOptions {
  /** Shared Redis: the limit holds across every process; null: per-process memory. */
  redis: Redis | null;
  prefix: string;
  perMinute: number;
}

/**
 * Per-subject request limit over a one-minute window. rate-limiter-flexible does the counting
 * with one atomic Redis script per request; when Redis fails it falls back to an in-memory
 * limiter (its "insurance"), so an outage of Redis degrades the limit instead of every request.
 */
export class SubjectRateLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(private readonly options: RateLimiterOptions) {
    const base = { keyPrefix: `${options.prefix}:rate`, points: options.perMinute, duration: 60 };
    const memory = new RateLimiterMemory(base);
    this.limiter = options.redis
      ? new RateLimiterRedis({ ...base, storeClient: options.redis, insuranceLimiter: memory })
      : memory;
  }

  /**
   * Counts one request of `subject` now and returns its verdict for the caller to await later (a
   * turn command, beside its running-turn slot); a refusal not awaited yet is no unhandled rejection.
   */
  pending(subject: string): Promise<void> {
    const verdict = this.consume(subject);
    verdict.catch(() => undefined);
    return verdict;
  }

  /** Counts one request of `subject`; RATE_LIMITED with details.retryAfterSeconds when over. */
  async consume(subject: string): Promise<void> {
    try {
      await this.limiter.consume(subject, 1);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const retryAfterSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new DomainError('RATE_LIMITED', `Too many requests; try again in ${retryAfterSeconds} s.`, {
        limitPerMinute: this.options.perMinute,
        retryAfterSeconds,
      });
    }
  }
}

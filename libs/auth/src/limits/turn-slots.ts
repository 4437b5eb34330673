import { type Redis } from '@parley/platform';
import { DomainError } from '@parley/core';

export interface TurnSlotsOptions {
  redis: Redis | null;
  prefix: string;
  maxPerSubject: number;
  /** A slot nobody releases (a crashed worker) frees itself after this long. */
  ttlMs: number;
}

// One sorted set per subject: member = conversation id, score = expiry (Redis server time, so
// processes with skewed clocks agree). Expired members are dropped before counting; re-acquiring
// a held slot only extends it. 0: refused, 1: taken, 2: held already (extended).
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not held) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if held then return 2 end
return 1
`;

// Extends a held slot to at least ARGV[2] ms from now; a slot not held is left alone. 1: extended.
const HOLD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not held) or tonumber(held) <= now then return 0 end
local untilMs = now + tonumber(ARGV[2])
if tonumber(held) < untilMs then redis.call('ZADD', KEYS[1], untilMs, ARGV[1]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

/** How long a slot outlives its turn's deadline before it frees itself (a crashed worker's). */
export const SLOT_GRACE_MS = 60_000;

/**
 * `taken`: the conversation had no slot and now has one; `held`: its slot was held already (a
 * running turn's), and is only extended — a command refused after this must leave it alone.
 */
export type SlotGrant = 'taken' | 'held';

/** The script as a command of the connection: sent by its SHA, loaded again if Redis lost it. */
type SlotsRedis = Redis & {
  parleyAcquireTurnSlot(key: string, member: string, max: number, ttlMs: number): Promise<number>;
  parleyHoldTurnSlot(key: string, member: string, forMs: number): Promise<number>;
};

/**
 * Caps the turns running at once for one subject (MAX_RUNNING_TURNS_PER_SUBJECT). The command
 * handler acquires a slot before it enqueues a turn; the worker releases it when the turn ends.
 */
export class TurnSlots {
  private readonly memory = new Map<string, Map<string, number>>();

  constructor(private readonly options: TurnSlotsOptions) {
    const { redis } = options;
    if (redis && !('parleyAcquireTurnSlot' in redis))
      redis.defineCommand('parleyAcquireTurnSlot', { numberOfKeys: 1, lua: ACQUIRE });
    if (redis && !('parleyHoldTurnSlot' in redis))
      redis.defineCommand('parleyHoldTurnSlot', { numberOfKeys: 1, lua: HOLD });
  }

  /**
   * RATE_LIMITED (429, Retry-After) when the subject already runs the maximum of turns;
   * SERVICE_UNAVAILABLE (503) when Redis does not answer — a turn is not started (nor its
   * command recorded) while the queue it needs is down.
   */
  async acquire(subject: string, conversationId: string): Promise<SlotGrant> {
    const { redis, maxPerSubject, ttlMs } = this.options;
    const granted = redis
      ? await (redis as SlotsRedis)
          .parleyAcquireTurnSlot(this.key(subject), conversationId, maxPerSubject, ttlMs)
          .catch(() => {
            throw new DomainError(
              'SERVICE_UNAVAILABLE',
              'Redis is unavailable: no turn can start; try again shortly.',
              {
                dependency: 'redis',
                retryAfterSeconds: 5,
              },
            );
          })
      : this.acquireInMemory(subject, conversationId);
    if (granted === 1) return 'taken';
    if (granted === 2) return 'held';
    throw new DomainError(
      'RATE_LIMITED',
      `Too many running turns: at most ${maxPerSubject} at once for one caller; wait for one to finish.`,
      { maxRunningTurns: maxPerSubject, retryAfterSeconds: 5 },
    );
  }

  /**
   * Keeps a held slot for at least `forMs` more: a turn whose own time budget (a configuration's
   * turnTimeoutMs) is longer than the slots' lifetime would otherwise lose its slot while it runs.
   */
  async holdFor(subject: string, conversationId: string, forMs: number): Promise<void> {
    const ms = Math.ceil(forMs);
    if (this.options.redis) {
      await (this.options.redis as SlotsRedis).parleyHoldTurnSlot(this.key(subject), conversationId, ms);
      return;
    }
    const held = this.memory.get(subject);
    const expiresAt = held?.get(conversationId);
    if (held && expiresAt !== undefined && expiresAt > Date.now())
      held.set(conversationId, Math.max(expiresAt, Date.now() + ms));
  }

  async release(subject: string, conversationId: string): Promise<void> {
    if (this.options.redis) await this.options.redis.zrem(this.key(subject), conversationId);
    else this.memory.get(subject)?.delete(conversationId);
  }

  private key(subject: string): string {
    return `${this.options.prefix}:turn-slots:${subject}`;
  }

  /** The Redis script's answer, kept in this process's memory: 0 refused, 1 taken, 2 held already. */
  private acquireInMemory(subject: string, conversationId: string): 0 | 1 | 2 {
    const now = Date.now();
    const held = this.memory.get(subject) ?? new Map<string, number>();
    this.memory.set(subject, held);
    for (const [id, expiresAt] of held) if (expiresAt <= now) held.delete(id);
    const had = held.has(conversationId);
    if (!had && held.size >= this.options.maxPerSubject) return 0;
    held.set(conversationId, now + this.options.ttlMs);
    return had ? 2 : 1;
  }
}

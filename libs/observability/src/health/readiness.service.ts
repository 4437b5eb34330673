import { Inject, Injectable, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { NATS_LINK, PG_POOL, REDIS, type NatsLink, type Redis } from '@parley/platform';
import { DomainError } from '@parley/core';
import type { Pool } from 'pg';

export type CheckStatus = 'ok' | 'down' | 'disabled';
export type Probe = () => Promise<unknown>;

export interface Readiness {
  status: 'ok';
  checks: Record<string, CheckStatus>;
}

const DEFAULT_TIMEOUT_MS = 1_500;
/** A readiness answer serves every probe for this long: a flood of probes does not multiply them. */
const CACHE_MS = 1_000;

/**
 * Readiness of the dependencies this process uses, found by injection (PG_POOL `select 1`, REDIS
 * PING, a flush of the NATS_LINK's connection, down while NATS has not answered yet). A dependency that is not configured reports 'disabled' and does
 * not fail readiness; other probes can be added with `register`. One round of probes answers
 * every check that starts within a second of it.
 */
@Injectable()
export class ReadinessService implements BeforeApplicationShutdown {
  private readonly probes = new Map<string, Probe | null>([
    ['postgres', null],
    ['redis', null],
    ['nats', null],
  ]);
  private timeoutMs = DEFAULT_TIMEOUT_MS;
  private latest: { at: number; checks: Promise<Record<string, CheckStatus>> } | null = null;
  /** Set when the process begins to stop: it takes no new work, so a load balancer should send none. */
  private stopping = false;

  constructor(
    @Optional() @Inject(PG_POOL) pool?: Pool,
    @Optional() @Inject(REDIS) redis?: Redis | null,
    @Optional() @Inject(NATS_LINK) nats?: NatsLink,
  ) {
    if (pool) this.register('postgres', () => pool.query('select 1'));
    if (redis) this.register('redis', () => redis.ping());
    if (nats?.enabled)
      this.register('nats', () => {
        if (!nats.connection) throw new Error('NATS has not answered yet');
        return nats.connection.flush();
      });
  }

  /** Adds or replaces a probe; null marks the dependency as disabled. */
  register(name: string, probe: Probe | null): this {
    this.probes.set(name, probe);
    this.latest = null;
    return this;
  }

  withTimeout(ms: number): this {
    this.timeoutMs = ms;
    return this;
  }

  check(): Promise<Record<string, CheckStatus>> {
    const now = Date.now();
    if (this.latest && now - this.latest.at < CACHE_MS) return this.latest.checks;
    const checks = this.probeAll();
    this.latest = { at: now, checks };
    return checks;
  }

  private async probeAll(): Promise<Record<string, CheckStatus>> {
    const entries = await Promise.all(
      [...this.probes].map(async ([name, probe]) => [name, probe ? await this.run(probe) : 'disabled'] as const),
    );
    return Object.fromEntries(entries);
  }

  /** From the start of a shutdown on, readiness answers 503 (its running turns get their grace meanwhile). */
  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  /**
   * Resolves when every configured dependency answers; else SERVICE_UNAVAILABLE naming the
   * failing ones, or saying that the process is shutting down.
   */
  async assertReady(): Promise<Readiness> {
    if (this.stopping) throw new DomainError('SERVICE_UNAVAILABLE', 'not ready: shutting down', { shuttingDown: true });
    const checks = await this.check();
    const down = Object.keys(checks).filter((name) => checks[name] === 'down');
    if (down.length > 0)
      throw new DomainError('SERVICE_UNAVAILABLE', `not ready: ${down.join(', ')}`, { checks: { ...checks } });
    return { status: 'ok', checks };
  }

  private async run(probe: Probe): Promise<CheckStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), this.timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(probe), timeout]);
      return 'ok';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}

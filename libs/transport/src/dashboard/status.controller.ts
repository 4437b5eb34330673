import { Controller, Get, Inject, Optional } from '@nestjs/common';
import { Roles } from '@parley/auth';
import { BreakerRegistry } from '@parley/llm';
import { MetricsService, ReadinessService, type CheckStatus } from '@parley/observability';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';

export interface ServiceStatus {
  /** Each dependency's readiness probe (the same as /health/ready, never failing the call). */
  dependencies: Record<string, CheckStatus>;
  /** Age in ms of the newest event each projection has not applied yet (0 when caught up). */
  projectionLagMs: Record<string, number | null>;
  /** Jobs waiting per queue (null when the queue did not answer). */
  queueDepth: Record<string, number | null>;
  /** Conversations whose turn is running, per the read models. */
  runningTurns: number;
  /** The circuit breaker of each provider this process has called: closed, open or half_open. */
  breakers: Record<string, string>;
  at: string;
}

/**
 * GET /api/v1/status: what the dashboard's health page shows, for auditors and admins. It reads
 * what /health/ready and /metrics already measure, in one JSON answer.
 */
@Controller('api/v1/status')
export class StatusController {
  constructor(
    @Inject(ReadinessService) private readonly readiness: ReadinessService,
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Optional() @Inject(BreakerRegistry) private readonly breakers?: BreakerRegistry,
  ) {}

  @Get()
  @Roles('auditor', 'admin')
  async status(): Promise<ServiceStatus> {
    const [dependencies, projectionLagMs, queueDepth, running] = await Promise.all([
      this.readiness.check(),
      this.metrics.gaugeValues('projection_lag_ms'),
      this.metrics.gaugeValues('queue_depth'),
      this.pool.query<{ n: number }>(`select count(*)::int as n from rm_conversations where status = 'RU'`),
    ]);
    return {
      dependencies,
      projectionLagMs,
      queueDepth,
      runningTurns: running.rows[0]?.n ?? 0,
      breakers: this.breakers?.states() ?? {},
      at: new Date().toISOString(),
    };
  }
}

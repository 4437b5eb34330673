import { Global, Module } from '@nestjs/common';
import { HealthController } from './health/health.controller';
import { ReadinessService } from './health/readiness.service';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';

/**
 * /health, /health/ready and /metrics, with the MetricsService and ReadinessService every other
 * module records into. Import it once per app; PG_POOL and REDIS are picked up when present.
 */
@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [MetricsService, ReadinessService],
  exports: [MetricsService, ReadinessService],
})
export class ObservabilityModule {}

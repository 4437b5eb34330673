import { Controller, Get, Inject } from '@nestjs/common';
import { ReadinessService, type Readiness } from './readiness.service';

/** Liveness (the process answers) and readiness (its dependencies answer). Public by default. */
@Controller('health')
export class HealthController {
  private readonly startedAt = Date.now();

  constructor(@Inject(ReadinessService) private readonly readiness: ReadinessService) {}

  @Get()
  live(): { status: 'ok'; uptimeSeconds: number } {
    return { status: 'ok', uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000) };
  }

  /** 200 with every check, or 503 SERVICE_UNAVAILABLE naming the dependency that failed. */
  @Get('ready')
  ready(): Promise<Readiness> {
    return this.readiness.assertReady();
  }
}

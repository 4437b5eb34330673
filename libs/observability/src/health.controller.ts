import { Controller, Get } from '@nestjs/common';

/** Liveness: the process is up and its event loop answers. Readiness lives beside it. */
@Controller('health')
export class HealthController {
  private readonly startedAt = Date.now();

  @Get()
  live(): { status: 'ok'; uptimeSeconds: number } {
    return { status: 'ok', uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000) };
  }
}

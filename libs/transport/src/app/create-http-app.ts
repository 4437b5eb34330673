import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Config } from '@parley/config';
import { instrumentHttp, MetricsService, NestPinoLogger, type Logger } from '@parley/observability';
import { HttpErrorFilter } from '../http/http-error.filter';

/**
 * Builds a Parley HTTP app on Fastify the same way for every deployable and every end-to-end
 * test: body limit, JSON logs, HTTP metrics, and the one error filter.
 */
export async function createHttpApp(
  module: DynamicModule,
  config: Config,
  logger: Logger,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    module,
    new FastifyAdapter({ bodyLimit: config.http.bodyLimitBytes, trustProxy: config.http.trustProxy }),
    { logger: new NestPinoLogger(logger) },
  );
  instrumentHttp(app.getHttpAdapter().getInstance(), app.get(MetricsService));
  app.useGlobalFilters(new HttpErrorFilter((err) => logger.error({ err }, 'internal error')));
  return app;
}

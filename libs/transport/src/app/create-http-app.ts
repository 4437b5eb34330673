import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import helmet from '@fastify/helmet';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Config } from '@parley/config';
import { instrumentHttp, MetricsService, NestPinoLogger, type Logger } from '@parley/observability';
import { HttpErrorFilter } from '../http/http-error.filter';

/**
 * helmet's headers on every response. Its Content-Security-Policy allows only same-origin scripts,
 * which /docs keeps to; `upgrade-insecure-requests` is left out, as Parley is often served over
 * plain HTTP inside a network and /docs must load its files from where it is.
 */
const SECURITY_HEADERS = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/**
 * Builds a Parley HTTP app on Fastify the same way for every deployable and every end-to-end
 * test: body limit, security headers, JSON logs, HTTP metrics, and the one error filter.
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
  await app.register(helmet, SECURITY_HEADERS);
  instrumentHttp(app.getHttpAdapter().getInstance(), app.get(MetricsService));
  app.useGlobalFilters(new HttpErrorFilter((err) => logger.error({ err }, 'internal error')));
  return app;
}

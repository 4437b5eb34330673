import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import multipart from '@fastify/multipart';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Config } from '@parley/config';
import { instrumentHttp, MetricsService, NestPinoLogger, type Logger } from '@parley/observability';
import { HttpErrorFilter } from '../http/http-error.filter';
import { securityHeaders } from './security-headers';

/**
 * helmet's headers on every response. Its Content-Security-Policy allows only same-origin scripts,
 * which /docs keeps to; `upgrade-insecure-requests` is left out, as Parley is often served over
 * plain HTTP inside a network and /docs must load its files from where it is.
 */
const SECURITY_HEADERS = securityHeaders({
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
});

/**
 * Builds a Parley HTTP app on Fastify the same way for every deployable and every end-to-end
 * test: body limit, security headers, document uploads, JSON logs, HTTP metrics, and the one error filter.
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
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (_request, reply, done) => {
      reply.headers(SECURITY_HEADERS);
      done();
    });
  await allowDocumentUploads(app, config);
  instrumentHttp(app.getHttpAdapter().getInstance(), app.get(MetricsService));
  app.useGlobalFilters(new HttpErrorFilter((err) => logger.error({ err }, 'internal error')));
  return app;
}

/** Paths of the routes that take a whole document: `POST /api/v1/collections/{code}/documents`. */
const DOCUMENT_ROUTE = /^\/api\/v1\/collections\/[^/]+\/documents$/;

/**
 * Multipart uploads (one file of at most INGEST_MAX_BYTES, a few small fields), and a body limit
 * on the document route large enough for a JSON text of INGEST_MAX_BYTES (escapes included);
 * the ingestion service then holds the text itself to the limit, naming it. Every other route
 * keeps HTTP_BODY_LIMIT_BYTES.
 */
async function allowDocumentUploads(app: NestFastifyApplication, config: Config): Promise<void> {
  const maxBytes = config.ingestion.maxBytes;
  await app.register(multipart, {
    limits: { fileSize: maxBytes, files: 1, fields: 8, fieldSize: 65_536, parts: 10 },
  });
  const documentBodyLimit = Math.max(config.http.bodyLimitBytes, 2 * maxBytes + 65_536);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (route.method === 'POST' && DOCUMENT_ROUTE.test(route.url.replace(/:[^/]+/g, 'x')))
        route.bodyLimit = documentBodyLimit;
    });
}

import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiKeysService, ensureFirstRunKey } from '@parley/auth';
import { ConfigError, loadConfig, type Config } from '@parley/config';
import {
  createLogger,
  HealthController,
  MetricsService,
  NestPinoLogger,
  startTracing,
  type Logger,
} from '@parley/observability';
import { AFTER_ABORT_MS, resolveDatabase, withLocalEncryptionKey } from '@parley/platform';
import { DomainError, ERROR_STATUS, errorBody } from '@parley/core';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createHttpApp } from './create-http-app';
import { registerConfigSecrets } from './register-config-secrets';

/** How long past SHUTDOWN_GRACE_MS the process may take to close: the aborted jobs' settling, then the connections. */
const EXIT_AFTER_GRACE_MS = AFTER_ABORT_MS + 5_000;

export interface DeployableOptions {
  /** `parley-server`, `parley-worker`…: the logger's name. */
  name: string;
  /** `embedded`: the database is the embedded PGlite (no DATABASE_URL). */
  module(config: Config, database: { embedded: boolean }): DynamicModule;
  /**
   * `api`: the module's routes on Fastify. `background`: no routes of the module, only
   * /health, /health/ready and /metrics on PORT (worker, projector).
   */
  kind: 'api' | 'background';
  /** Start an embedded PostgreSQL when DATABASE_URL is unset: the all-in-one server only. */
  embeddedDatabase?: boolean;
  /**
   * With no credential configured and no API key in the database: outside production, create a
   * development admin key in `<dataDir>/admin.key`; in production, refuse to start. The
   * all-in-one server only (`npm start`).
   */
  firstRunKey?: boolean;
}

/** Boots one deployable: config, secrets, database, tracing, the Nest app, and a graceful stop on SIGTERM/SIGINT. */
export function runDeployable(options: DeployableOptions): void {
  const logger = createLogger({ level: 'info', name: options.name });
  boot(options, logger).catch((err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else logger.fatal({ err }, `${options.name} failed to start`);
    process.exit(1);
  });
}

async function boot(options: DeployableOptions, logger: Logger): Promise<void> {
  const loaded = loadConfig();
  logger.level = loaded.log.level;
  const warn = (message: string) => logger.warn(message);
  const withKey = await withLocalEncryptionKey(loaded, warn);
  registerConfigSecrets(withKey);
  if (!options.embeddedDatabase && !withKey.database.url)
    throw new ConfigError([`DATABASE_URL: required by ${options.name}; only the all-in-one server embeds PostgreSQL`]);
  const database = await resolveDatabase(withKey, warn);
  const config = database.config;
  const tracing = await startTracing({
    serviceName: config.telemetry.serviceName,
    otlpEndpoint: config.telemetry.otlpEndpoint,
  });
  const stop = await start(options, config, logger, database.embedded);
  logger.info({ port: config.http.port, embeddedDatabase: database.embedded }, `${options.name} running`);

  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${options.name} stopping`);
    // A stuck dependency must not keep the process alive past the orchestrator's patience.
    setTimeout(() => process.exit(1), config.shutdown.graceMs + EXIT_AFTER_GRACE_MS).unref();
    await stop();
    await tracing?.shutdown();
    await database.stop();
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) =>
    void shutdown(signal).catch((err: unknown) => {
      logger.error({ err }, `${options.name} did not stop cleanly`);
      process.exit(1);
    });
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

async function start(
  options: DeployableOptions,
  config: Config,
  logger: Logger,
  embedded: boolean,
): Promise<() => Promise<void>> {
  const module = options.module(config, { embedded });
  if (options.kind === 'api') {
    const app = await createHttpApp(module, config, logger);
    if (options.firstRunKey) {
      const host = ['0.0.0.0', '::', ''].includes(config.http.host) ? 'localhost' : config.http.host;
      const base = `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}`;
      await ensureFirstRunKey(config, app.get(ApiKeysService), logger, base).catch(async (err: unknown) => {
        await app.close();
        throw err;
      });
    }
    await app.listen(config.http.port, config.http.host);
    return () => app.close();
  }
  const context = await NestFactory.createApplicationContext(module, {
    logger: new NestPinoLogger(logger),
  });
  const server = await listenForOperations(context, config.http.port, config.http.host);
  return async () => {
    server.close();
    server.closeAllConnections();
    await context.close();
  };
}

/**
 * /health, /health/ready and /metrics of a deployable without routes of its own, on a bare
 * `node:http` server: the answers come from the same HealthController and MetricsService the API
 * apps serve them with.
 */
export async function listenForOperations(
  context: INestApplicationContext,
  port: number,
  host: string,
): Promise<Server> {
  const health = context.get(HealthController);
  const metrics = context.get(MetricsService);
  const server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    const json = (status: number, body: unknown) =>
      send(status, 'application/json; charset=utf-8', JSON.stringify(body));
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return json(404, errorBody(DomainError.notFound('Route', `${req.method} ${path}`)));
    if (path === '/health') return json(200, health.live());
    if (path === '/health/ready')
      return void health.ready().then(
        (ready) => json(200, ready),
        (err: unknown) =>
          err instanceof DomainError
            ? json(ERROR_STATUS[err.code], errorBody(err))
            : json(500, { error: { code: 'INTERNAL', message: 'The readiness check failed.' } }),
      );
    if (path === '/metrics')
      return void metrics.render().then(
        (text) => send(200, metrics.contentType, text),
        () => json(500, { error: { code: 'INTERNAL', message: 'The metrics could not be rendered.' } }),
      );
    json(404, errorBody(DomainError.notFound('Route', `GET ${path}`)));
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

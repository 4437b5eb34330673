import 'reflect-metadata';
import { ConfigError, loadConfig } from '@parley/config';
import { createLogger, registerSecret, startTracing, type Logger } from '@parley/observability';
import { resolveDatabase, withLocalEncryptionKey } from '@parley/platform';
import { createHttpApp } from '@parley/transport';
import { AppModule } from './app.module';

const SHUTDOWN_GRACE_MS = 15_000;

async function bootstrap(logger: Logger): Promise<void> {
  const loaded = loadConfig();
  logger.level = loaded.log.level;
  const warn = (message: string) => logger.warn(message);
  const withKey = await withLocalEncryptionKey(loaded, warn);
  for (const secret of [withKey.security.encryptionKey, withKey.security.adminApiKey, withKey.security.jwt.secret])
    registerSecret(secret);
  const database = await resolveDatabase(withKey, warn);
  const config = database.config;
  const tracing = await startTracing({
    serviceName: config.telemetry.serviceName,
    otlpEndpoint: config.telemetry.otlpEndpoint,
  });

  const app = await createHttpApp(AppModule.forRoot(config), config, logger);
  await app.listen(config.http.port, config.http.host);
  logger.info({ port: config.http.port, embeddedDatabase: database.embedded }, 'parley server listening');

  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'parley server stopping');
    // A stuck dependency must not keep the process alive past the orchestrator's patience.
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    await app.close();
    await tracing?.shutdown();
    await database.stop();
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) =>
    void shutdown(signal).catch((err: unknown) => {
      logger.error({ err }, 'parley server did not stop cleanly');
      process.exit(1);
    });
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

const logger = createLogger({ level: 'info', name: 'parley-server' });
bootstrap(logger).catch((err: unknown) => {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else logger.fatal({ err }, 'parley server failed to start');
  process.exit(1);
});

import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError, loadConfig } from '@parley/config';
import { createLogger } from '@parley/observability';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.log.level, name: 'parley-server' });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    new FastifyAdapter({ bodyLimit: config.http.bodyLimitBytes }),
    { logger: false },
  );
  app.enableShutdownHooks();
  await app.listen(config.http.port, config.http.host);
  logger.info({ port: config.http.port }, 'parley server listening');
}

bootstrap().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`parley server failed to start: ${(err as Error).stack ?? String(err)}\n`);
  }
  process.exit(1);
});

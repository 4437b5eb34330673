import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigModule, loadConfig } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { createLogger, NestPinoLogger, ObservabilityModule } from '@parley/observability';
import { DatabaseModule, NatsModule } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { IntegrationRelayModule } from '@parley/transport';

/** The projector: every read-model projection and the JetStream integration relay, no HTTP. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.log.level, name: 'parley-projector' });
  const app = await NestFactory.createApplicationContext(
    {
      module: class ProjectorModule {},
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        NatsModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        ReadModelsModule.forRoot({ projections: true }),
        IntegrationRelayModule,
      ],
    },
    { logger: new NestPinoLogger(logger) },
  );
  app.enableShutdownHooks();
  logger.info('parley projector running');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

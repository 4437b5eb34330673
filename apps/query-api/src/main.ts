import 'reflect-metadata';
import { AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES } from '@parley/catalog';
import { ConfigModule, loadConfig } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { createLogger, ObservabilityModule } from '@parley/observability';
import { DatabaseModule, NatsModule, RedisModule } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { createHttpApp, QueryTransportModule } from '@parley/transport';

/** The query side: HTTP and NATS queries, auditors' reads and the SSE stream; projections run in apps/projector. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.log.level, name: 'parley-query-api' });
  const app = await createHttpApp(
    {
      module: class QueryApiModule {},
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
        RedisModule.forRoot(),
        NatsModule.forRoot(),
        EventStoreModule.forRoot(),
        ObservabilityModule,
        AuthModule,
        ReadModelsModule.forRoot({ projections: false }),
        QueryTransportModule,
      ],
    },
    config,
    logger,
  );
  app.enableShutdownHooks();
  await app.listen(config.http.port, config.http.host);
  logger.info({ port: config.http.port }, 'parley query-api listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

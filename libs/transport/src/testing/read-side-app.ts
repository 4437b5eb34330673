import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ApiKeysService, AuthModule } from '@parley/auth';
import { CATALOG_ENTITIES } from '@parley/catalog';
import { ConfigModule, loadConfig, type Config } from '@parley/config';
import { COMMAND_HANDLERS } from '@parley/conversation';
import { EventStoreModule } from '@parley/event-store';
import { ObservabilityModule } from '@parley/observability';
import { DatabaseModule, NatsModule, RedisModule } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import { HttpErrorFilter } from '../http/http-error.filter';
import { CommandTransportModule } from '../app/command-transport.module';
import { QueryTransportModule } from '../app/query-transport.module';
import { JsonRpcModule } from '../json-rpc/json-rpc.module';
import { IntegrationRelayModule } from '../nats/integration-relay.module';

export const ADMIN_KEY = 'pk_read_side_admin_key_0123456789';

export interface ReadSideApp {
  app: NestFastifyApplication;
  config: Config;
  db: TestDatabase;
  clientKey(subject: string, role?: 'client' | 'auditor'): Promise<string>;
  close(): Promise<void>;
}

/** Stands in for ConversationModule: each command handler is `fake(handler)`. */
export type FakeHandlers = (handler: Type) => object;

function handlersModule(fake: FakeHandlers): DynamicModule {
  @Module({})
  class FakeHandlersModule {}
  return {
    module: FakeHandlersModule,
    providers: COMMAND_HANDLERS.map((handler) => ({ provide: handler, useValue: fake(handler) })),
    exports: COMMAND_HANDLERS,
  };
}

/**
 * The read side as an app would assemble it (projections, queries over HTTP and NATS, SSE,
 * the commands' front doors over `fake` handlers, the integration relay, JSON-RPC), on a database and a
 * NATS prefix of its own.
 */
export async function startReadSideApp(
  label: string,
  fake: FakeHandlers,
  env: Record<string, string> = {},
): Promise<ReadSideApp> {
  const db = await createTestDatabase(label);
  const config = loadConfig({
    DATABASE_URL: db.url,
    NATS_URL: 'nats://127.0.0.1:4222',
    PARLEY_PREFIX: `t${randomBytes(5).toString('hex')}`,
    PARLEY_ADMIN_API_KEY: ADMIN_KEY,
    PARLEY_ENCRYPTION_KEY: 'a'.repeat(64),
    SUBSCRIPTION_POLL_MS: '50',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      DatabaseModule.forRoot({ entities: [...CATALOG_ENTITIES] }),
      RedisModule.forRoot({ url: null }),
      NatsModule.forRoot(),
      EventStoreModule.forRoot(),
      ObservabilityModule,
      AuthModule,
      ReadModelsModule.forRoot({ projections: true, minPositionTimeoutMs: 400 }),
      QueryTransportModule,
      CommandTransportModule.forRoot(handlersModule(fake)),
      IntegrationRelayModule,
      JsonRpcModule,
    ],
  }).compile();
  moduleRef.useLogger(false);
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  app.useGlobalFilters(new HttpErrorFilter());
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    config,
    db,
    clientKey: async (subject, role = 'client') =>
      (await app.get(ApiKeysService).create({ subject, roles: [role] })).key,
    close: async () => {
      await app.close();
      await db.drop();
    },
  };
}

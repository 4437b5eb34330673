import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { Authenticator, SubjectRateLimiter } from '@parley/auth';
import { CatalogModule, CatalogQueries } from '@parley/catalog';
import { CONFIG, type Config } from '@parley/config';
import { CONVERSATION_COMMANDS, type ConversationCommands } from '@parley/conversation';
import { MetricsService } from '@parley/observability';
import { NATS_LINK, type NatsLink } from '@parley/platform';
import { AuditQueries, ConversationQueries, UsageQueries } from '@parley/read-models';
import { commandMethods } from './command-methods';
import { NatsFrontDoor } from './nats-front-door';
import { queryMethods } from './query-methods';

export const NATS_QUERY_SERVER = Symbol('parley.nats-query-server');
export const NATS_COMMAND_SERVER = Symbol('parley.nats-command-server');

const DEPS = [CONFIG, NATS_LINK, Authenticator, SubjectRateLimiter, MetricsService];
const deps = (
  config: Config,
  nats: NatsLink,
  authenticator: Authenticator,
  rateLimiter: SubjectRateLimiter,
  metrics: MetricsService,
) => ({
  config,
  nats,
  authenticator,
  rateLimiter,
  metrics,
});

/**
 * `<prefix>.qry.*` over NATS. Needs ReadModelsModule, AuthModule, ObservabilityModule,
 * NatsModule and DATA_SOURCE with the catalog entities (for CatalogModule).
 */
@Module({
  imports: [CatalogModule],
  providers: [
    {
      provide: NATS_QUERY_SERVER,
      inject: [...DEPS, CatalogQueries, ConversationQueries, UsageQueries, AuditQueries],
      useFactory: (
        config: Config,
        nats: NatsLink,
        authenticator: Authenticator,
        rateLimiter: SubjectRateLimiter,
        metrics: MetricsService,
        catalog: CatalogQueries,
        conversations: ConversationQueries,
        usage: UsageQueries,
        audit: AuditQueries,
      ) =>
        new NatsFrontDoor(
          'qry',
          deps(config, nats, authenticator, rateLimiter, metrics),
          queryMethods({ catalog, conversations, usage, audit }),
        ),
    },
  ],
})
export class NatsQueryModule {}

/**
 * `<prefix>.cmd.*` over NATS, over CONVERSATION_COMMANDS. `commands` is the module that
 * provides and exports that token (ConversationModule).
 */
@Module({})
export class NatsCommandModule {
  static forRoot(commands: NonNullable<ModuleMetadata['imports']>[number]): DynamicModule {
    return {
      module: NatsCommandModule,
      imports: [commands],
      providers: [
        {
          provide: NATS_COMMAND_SERVER,
          inject: [...DEPS, CONVERSATION_COMMANDS],
          useFactory: (
            config: Config,
            nats: NatsLink,
            authenticator: Authenticator,
            rateLimiter: SubjectRateLimiter,
            metrics: MetricsService,
            commands: ConversationCommands,
          ) =>
            new NatsFrontDoor('cmd', deps(config, nats, authenticator, rateLimiter, metrics), commandMethods(commands)),
        },
      ],
    };
  }
}

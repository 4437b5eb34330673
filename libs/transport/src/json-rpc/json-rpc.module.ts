import { Global, Logger, Module } from '@nestjs/common';
import { Authenticator, SubjectRateLimiter } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { MetricsService } from '@parley/observability';
import { NATS_LINK, type NatsLink } from '@parley/platform';
import { JsonRpcDispatcher } from './json-rpc';
import { forwarderOf } from './json-rpc-forward';
import { JsonRpcController } from './json-rpc.controller';
import { JsonRpcMethods } from './json-rpc-methods';
import { NatsJsonRpcDoor } from './nats-json-rpc';

const logger = new Logger('JsonRpc');

/**
 * JSON-RPC 2.0 on `POST /rpc` and the NATS subject `<prefix>.rpc`, over the methods of the
 * tables whose transport modules are in the app (CommandTransportModule, QueryTransportModule);
 * the other table's methods are forwarded to its NATS door, so the command API and the query API
 * each answer every method. Needs AuthModule, ObservabilityModule and NatsModule.
 */
@Global()
@Module({
  providers: [
    JsonRpcMethods,
    {
      provide: JsonRpcDispatcher,
      inject: [JsonRpcMethods, SubjectRateLimiter, CONFIG, NATS_LINK],
      useFactory: (methods: JsonRpcMethods, rateLimiter: SubjectRateLimiter, config: Config, nats: NatsLink) =>
        new JsonRpcDispatcher(() => methods.all, {
          rateLimiter,
          forwardOf: forwarderOf(config, nats),
          onInternal: (err) => logger.error(err instanceof Error ? (err.stack ?? err.message) : String(err)),
        }),
    },
    {
      provide: NatsJsonRpcDoor,
      inject: [CONFIG, NATS_LINK, Authenticator, SubjectRateLimiter, MetricsService, JsonRpcDispatcher],
      useFactory: (
        config: Config,
        nats: NatsLink,
        authenticator: Authenticator,
        rateLimiter: SubjectRateLimiter,
        metrics: MetricsService,
        dispatcher: JsonRpcDispatcher,
      ) => new NatsJsonRpcDoor({ config, nats, authenticator, rateLimiter, metrics }, dispatcher),
    },
  ],
  controllers: [JsonRpcController],
  exports: [JsonRpcMethods, JsonRpcDispatcher],
})
export class JsonRpcModule {}

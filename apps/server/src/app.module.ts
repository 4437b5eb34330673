import { Module } from '@nestjs/common';
import { ConfigModule, type Config } from '@parley/config';
import { AuthModule } from '@parley/auth';
import { ObservabilityModule } from '@parley/observability';
import { DatabaseModule, RedisModule } from '@parley/platform';

/** The all-in-one deployable: HTTP, NATS, worker and projector in one process. */
@Module({})
export class AppModule {
  static forRoot(config: Config) {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        RedisModule.forRoot(),
        ObservabilityModule,
        AuthModule,
      ],
    };
  }
}

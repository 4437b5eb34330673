import { Global, Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { CONFIG, type Config } from '@parley/config';
import { REDIS, type Redis } from '@parley/platform';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeysService } from './api-keys/api-keys.service';
import { KeysHttpController } from './api-keys/keys.http.controller';
import { Authenticator } from './authenticator';
import { AuthGuard } from './http/auth.guard';
import { ADDRESS_RATE_LIMITER, SubjectRateLimiter } from './limits/rate-limiter';
import { SLOT_GRACE_MS, TurnSlots } from './limits/turn-slots';

class AuthWarnings implements OnApplicationBootstrap {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  onApplicationBootstrap(): void {
    if (!this.config.security.authEnabled)
      new Logger('Auth').warn('PARLEY_AUTH_ENABLED=false: every request runs as an admin. Development only.');
  }
}

/**
 * Authentication (API keys, bootstrap admin key, JWT), the global AuthGuard, /api/v1/keys, the
 * per-address and per-subject rate limits and the running-turn cap. Needs PG_POOL (DatabaseModule) and REDIS
 * (RedisModule; null falls back to per-process limits).
 */
@Global()
@Module({
  controllers: [KeysHttpController],
  providers: [
    ApiKeyRepository,
    {
      provide: ApiKeysService,
      inject: [ApiKeyRepository, CONFIG],
      useFactory: (keys: ApiKeyRepository, config: Config) => new ApiKeysService(keys, config.security.apiKeyCacheMs),
    },
    Authenticator,
    AuthWarnings,
    {
      provide: SubjectRateLimiter,
      inject: [CONFIG, REDIS],
      useFactory: (config: Config, redis: Redis | null) =>
        new SubjectRateLimiter({ redis, prefix: config.prefix, perMinute: config.limits.rateLimitPerMinute }),
    },
    {
      // In memory: a flood guard per process needs no Redis round trip before every request.
      provide: ADDRESS_RATE_LIMITER,
      inject: [CONFIG],
      useFactory: (config: Config) =>
        new SubjectRateLimiter({
          redis: null,
          prefix: `${config.prefix}:address`,
          perMinute: config.limits.rateLimitPerIpPerMinute,
        }),
    },
    {
      provide: TurnSlots,
      inject: [CONFIG, REDIS],
      useFactory: (config: Config, redis: Redis | null) =>
        new TurnSlots({
          redis,
          prefix: config.prefix,
          maxPerSubject: config.limits.maxRunningTurnsPerSubject,
          // A turn with a longer budget of its own extends its slot when it runs (TurnRunner).
          ttlMs: config.turn.timeoutMs + SLOT_GRACE_MS,
        }),
    },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [ApiKeysService, Authenticator, SubjectRateLimiter, TurnSlots],
})
export class AuthModule {}

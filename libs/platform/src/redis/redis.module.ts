import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { connectedRedis, type Redis } from './redis-client';

/** The shared ioredis connection, or null when REDIS_URL is unset (in-process fallbacks apply). */
export const REDIS = Symbol('parley.redis');

class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.redis && this.redis.status !== 'end') await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}

@Global()
@Module({})
export class RedisModule {
  /** `url` overrides config.redis.url (tests point it at their own server). */
  static forRoot(options: { url?: string | null } = {}): DynamicModule {
    return {
      module: RedisModule,
      providers: [
        {
          provide: REDIS,
          inject: [CONFIG],
          useFactory: async (config: Config) => {
            const url = options.url === undefined ? config.redis.url : options.url;
            return url ? connectedRedis(url) : null;
          },
        },
        RedisLifecycle,
      ],
      exports: [REDIS],
    };
  }
}

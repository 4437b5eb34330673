import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { connect, type NatsConnection } from 'nats';

/** The shared NATS connection, or null when NATS_URL is unset (NATS is off). */
export const NATS_CONNECTION = Symbol('parley.nats-connection');

class NatsLifecycle implements OnApplicationShutdown {
  constructor(@Inject(NATS_CONNECTION) private readonly nats: NatsConnection | null) {}

  async onApplicationShutdown(): Promise<void> {
    // drain() delivers what is already buffered before closing, so a publish made just before
    // shutdown is not lost.
    if (this.nats && !this.nats.isClosed()) await this.nats.drain().catch(() => this.nats?.close());
  }
}

@Global()
@Module({})
export class NatsModule {
  /** `url` overrides config.nats.url (tests point it at their own server; null turns NATS off). */
  static forRoot(options: { url?: string | null; name?: string } = {}): DynamicModule {
    return {
      module: NatsModule,
      providers: [
        {
          provide: NATS_CONNECTION,
          inject: [CONFIG],
          useFactory: async (config: Config): Promise<NatsConnection | null> => {
            const url = options.url === undefined ? config.nats.url : options.url;
            if (!url) return null;
            // A server that restarts later is reconnected to for ever; one that cannot be reached
            // at boot stops the boot, with a sentence that names the setting and the address.
            return connect({
              servers: url,
              name: options.name ?? config.prefix,
              maxReconnectAttempts: -1,
              maxPingOut: 3,
            }).catch((err: unknown) => {
              // The logger prints the driver's reason after it, from `cause`.
              throw new Error(`NATS at ${url} (NATS_URL) could not be reached`, { cause: err });
            });
          },
        },
        NatsLifecycle,
      ],
      exports: [NATS_CONNECTION],
    };
  }
}

export type { NatsConnection };

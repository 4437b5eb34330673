import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { NatsConnection } from 'nats';
import { NatsLink } from './nats-link';
import { natsConnectSettings } from './nats-options';

/** The process's NatsLink: its connection once NATS answers; never one when NATS_URL is unset (NATS off). */
export const NATS_LINK = Symbol('parley.nats-link');

class NatsLifecycle implements OnApplicationShutdown {
  constructor(@Inject(NATS_LINK) private readonly link: NatsLink) {}

  async onApplicationShutdown(): Promise<void> {
    await this.link.close();
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
          provide: NATS_LINK,
          inject: [CONFIG],
          useFactory: (config: Config): Promise<NatsLink> | NatsLink => {
            const url = options.url === undefined ? config.nats.url : options.url;
            if (!url) return NatsLink.off();
            // The credentials leave the URL here: the link only ever shows the address.
            const settings = natsConnectSettings(url, config.nats);
            // A server that restarts later is reconnected to for ever; one that cannot be reached
            // at start is tried again in the background while the rest of Parley runs.
            return NatsLink.open(settings.shownUrl, {
              ...settings.options,
              name: options.name ?? config.prefix,
              maxPingOut: 3,
            });
          },
        },
        NatsLifecycle,
      ],
      exports: [NATS_LINK],
    };
  }
}

export type { NatsConnection };

import { Global, Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { NATS_LINK, type NatsLink } from '@parley/platform';
import { InProcessLiveDeltas } from './in-process-live-deltas';
import { LIVE_DELTAS, type LiveDeltas } from './live-deltas.port';
import { NatsLiveDeltas } from './nats-live-deltas';

/**
 * Provides LIVE_DELTAS: over NATS when the app has NATS on (NatsModule), in-process otherwise.
 * The worker publishes; the SSE stream subscribes.
 */
@Global()
@Module({
  providers: [
    {
      provide: LIVE_DELTAS,
      inject: [CONFIG, { token: NATS_LINK, optional: true }],
      useFactory: (config: Config, nats: NatsLink | undefined): LiveDeltas =>
        nats?.enabled ? new NatsLiveDeltas(nats, config.prefix) : new InProcessLiveDeltas(),
    },
  ],
  exports: [LIVE_DELTAS],
})
export class LiveDeltasModule {}

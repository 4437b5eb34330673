export { LIVE_DELTAS, type LiveDelta, type LiveDeltaListener, type LiveDeltas } from './live/live-deltas.port';
export { InProcessLiveDeltas } from './live/in-process-live-deltas';
export { NatsLiveDeltas } from './live/nats-live-deltas';
export { LiveDeltasModule } from './live/live-deltas.module';

export * from './event-store.port';
export {
  WrongExpectedVersion,
  StreamNotFound,
  StreamDeleted,
  DuplicateEventIds,
  InvalidEvent,
  EventTooLarge,
  type ActualState,
} from './errors';
export { comparePositions, maxPosition, minPosition, parsePosition, type ParsedPosition } from './position';
export { GENESIS_HASH, ChainVerifier, canonicalEvent, chainHash } from './hash-chain';
export { canonicalJson, canonicalJsonOf } from './canonical-json';
export { categoryOf } from './prepare-events';
export {
  SubscriptionRunner,
  runSubscription,
  type CheckpointSwap,
  type SubscriptionRunnerOptions,
  type SubscriptionSettings,
} from './subscription/subscription-runner';
export { lockCheckpoint, readCheckpoint, resetSubscription, writeCheckpoint } from './subscription/checkpoints';
export { PostgresEventStore, type PostgresEventStoreOptions } from './postgres/postgres-event-store';
export { KurrentEventStore, type KurrentEventStoreOptions } from './kurrent/kurrent-event-store';
export { EventStoreModule } from './event-store.module';

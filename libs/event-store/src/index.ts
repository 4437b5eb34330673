export {
  EVENT_STORE,
  type EventStore,
  type EventToAppend,
  type GlobalFeed,
  type ReadStreamOptions,
  type RecordedEvent,
} from './event-store.port';
export { WrongExpectedVersion, StreamNotFound, StreamDeleted, EventTooLarge, InvalidEvent } from './errors';
export { comparePositions, maxPosition, minPosition, parsePosition } from './position';
export { SubscriptionRunner, runSubscription, type CheckpointSwap } from './subscription/subscription-runner';
export { lockCheckpoint, readCheckpoint, writeCheckpoint } from './subscription/checkpoints';
export { PostgresEventStore } from './postgres/postgres-event-store';
export { chainOptionsOf, EventStoreModule } from './event-store.module';

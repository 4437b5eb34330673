export {
  EVENT_STORE,
  type EventStore,
  type EventToAppend,
  type GlobalFeed,
  type ReadPageOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from './event-store.port';
export { WrongExpectedVersion, StreamNotFound, StreamDeleted, EventTooLarge, InvalidEvent } from './errors';
export { comparePositions, maxPosition, minPosition, parsePosition } from './position';
export { SubscriptionRunner, runSubscription, type CheckpointSwap } from './subscription/subscription-runner';
export { onLocalAppend, wakeAllSubscribers } from './subscription/append-notifier';
export { lockCheckpoint, readCheckpoint, writeCheckpoint } from './subscription/checkpoints';
export { HELD_WARN_MS, PostgresEventStore, type FeedHold } from './postgres/postgres-event-store';
export { chainOptionsOf, CONVERSATION_KEYS, conversationKeysOf, EventStoreModule } from './event-store.module';
export { ConversationKeys, type KeyState } from './content/conversation-keys';
export { openContent, rawStoreOf, SealingEventStore } from './content/sealing-event-store';
export { cipherOps, ERASED } from './content/content-cipher';
export { CONTENT_FIELDS } from './content/content-fields';

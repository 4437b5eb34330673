import type {
  AppendOptions,
  AppendResult,
  EventFilter,
  EventStore,
  EventToAppend,
  FeedPage,
  ReadPageOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeOptions,
  SubscriptionItem,
  VerifyResult,
} from './event-store.port';

/**
 * An EventStore that hands every call to `inner` as it is. The decorators over an adapter
 * (metering, content sealing) extend it and override only the calls they change.
 */
export class ForwardingEventStore implements EventStore {
  constructor(protected readonly inner: EventStore) {}

  get writesAlongside(): boolean {
    return this.inner.writesAlongside;
  }

  append(streamId: string, events: EventToAppend[], options?: AppendOptions): Promise<AppendResult> {
    return this.inner.append(streamId, events, options);
  }
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<SubscriptionItem> {
    return this.inner.subscribeToAll(options);
  }
  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    return this.inner.setStreamMetadata(streamId, metadata);
  }
  getStreamMetadata(streamId: string): Promise<StreamMetadata | null> {
    return this.inner.getStreamMetadata(streamId);
  }
  deleteStream(streamId: string): Promise<void> {
    return this.inner.deleteStream(streamId);
  }
  tombstoneStream(streamId: string): Promise<void> {
    return this.inner.tombstoneStream(streamId);
  }
  verifyStream(streamId: string): Promise<VerifyResult> {
    return this.inner.verifyStream(streamId);
  }
  headPosition(): Promise<string | null> {
    return this.inner.headPosition();
  }
  streamRevisions(streamIds: readonly string[]): Promise<Map<string, bigint>> {
    return this.inner.streamRevisions(streamIds);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  readPage(
    after: string | null,
    filter: EventFilter | undefined,
    maxCount: number,
    options?: ReadPageOptions,
  ): Promise<FeedPage> {
    return this.inner.readPage(after, filter, maxCount, options);
  }
  appendMark(): number {
    return this.inner.appendMark();
  }
  waitForAppend(timeoutMs: number, signal?: AbortSignal, mark?: number): Promise<void> {
    return this.inner.waitForAppend(timeoutMs, signal, mark);
  }
}

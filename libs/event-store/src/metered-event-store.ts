import type { AppendOptions, AppendResult, EventStore, EventToAppend } from './event-store.port';
import { ForwardingEventStore } from './forwarding-event-store';

/**
 * Decorates either adapter with the timing of its appends (`event_store_append_ms`); every
 * other call goes straight through, the global feed included, so subscriptions are unchanged.
 */
export class MeteredEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    private readonly onAppend: (durationMs: number) => void,
  ) {
    super(inner);
  }

  override async append(streamId: string, events: EventToAppend[], options?: AppendOptions): Promise<AppendResult> {
    const started = performance.now();
    try {
      return await this.inner.append(streamId, events, options);
    } finally {
      this.onAppend(performance.now() - started);
    }
  }
}

import { streamIdOf } from '@parley/domain';
import type { EventStore } from '@parley/event-store';
import type { LiveDeltas } from '@parley/read-models';
import { eventView } from '@parley/read-models';

export interface StreamSink {
  write(chunk: string): void;
}

export interface ConversationStreamOptions {
  store: EventStore;
  live: LiveDeltas;
  pollMs: number;
  heartbeatMs: number;
  pageSize?: number;
}

const frame = (fields: { id?: string; event: string; data: unknown }) =>
  `${fields.id === undefined ? '' : `id: ${fields.id}\n`}event: ${fields.event}\ndata: ${JSON.stringify(fields.data)}\n\n`;

/**
 * One SSE client's view of a conversation: stored events after `afterRevision` (exclusive;
 * the SSE id is the revision, so Last-Event-ID resumes exactly), then new ones as they are
 * appended, interleaved with live text deltas (`event: delta`, no id: they are not replayed).
 * Appends by this process wake it at once; those by other processes are found by polling.
 */
export async function streamConversation(
  conversationId: string,
  afterRevision: number,
  sink: StreamSink,
  signal: AbortSignal,
  options: ConversationStreamOptions,
): Promise<void> {
  const { store, live, pollMs, heartbeatMs, pageSize = 200 } = options;
  const stopDeltas = live.subscribe(conversationId, (delta) => sink.write(frame({ event: 'delta', data: delta })));
  const heartbeat = setInterval(() => sink.write(': keep-alive\n\n'), heartbeatMs);
  let next = afterRevision + 1;
  try {
    while (!signal.aborted) {
      const events = await store.readStream(streamIdOf(conversationId), {
        fromRevision: BigInt(next),
        maxCount: pageSize,
      });
      for (const e of events) {
        sink.write(frame({ id: String(e.revision), event: e.type, data: eventView(e) }));
        next = Number(e.revision) + 1;
      }
      if (events.length === pageSize) continue;
      await store.waitForAppend(pollMs, signal);
    }
  } finally {
    clearInterval(heartbeat);
    stopDeltas();
  }
}

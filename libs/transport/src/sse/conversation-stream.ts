import { streamIdOf } from '@parley/domain';
import type { EventStore } from '@parley/event-store';
import type { LiveDeltas } from '@parley/read-models';
import { eventView } from '@parley/read-models';
import type { StreamSeat } from './stream-hub';

export interface StreamSink {
  /** false: the client is behind; `drained` resolves when it has caught up. */
  write(chunk: string): boolean;
  drained(signal: AbortSignal): Promise<void>;
}

export interface ConversationStreamOptions {
  store: EventStore;
  live: LiveDeltas;
  /** Wakes the stream when its conversation has events past a revision (StreamHub). */
  seat: Pick<StreamSeat, 'waitBeyond'>;
  heartbeatMs: number;
  pageSize?: number;
}

/** After these a conversation takes no more commands: its stream has nothing more to show. */
const CLOSING_EVENTS: ReadonlySet<string> = new Set(['ConversationTerminated', 'ConversationKilled']);

const frame = (fields: { id?: string; event: string; data: unknown }) =>
  `${fields.id === undefined ? '' : `id: ${fields.id}\n`}event: ${fields.event}\ndata: ${JSON.stringify(fields.data)}\n\n`;

/**
 * One SSE client's view of a conversation: stored events after `afterRevision` (exclusive;
 * the SSE id is the revision, so Last-Event-ID resumes exactly), then new ones as they are
 * appended, interleaved with live text deltas (`event: delta`, no id: they are not replayed).
 * The seat wakes it when the conversation changed. Stored events are written one at a time and
 * wait for a client that is behind (`drained`). Resolves once the conversation is terminated
 * or killed, or when `signal` stops it.
 */
export async function streamConversation(
  conversationId: string,
  afterRevision: number,
  sink: StreamSink,
  signal: AbortSignal,
  options: ConversationStreamOptions,
): Promise<void> {
  const { store, live, seat, heartbeatMs, pageSize = 200 } = options;
  const stopDeltas = live.subscribe(conversationId, (delta) => sink.write(frame({ event: 'delta', data: delta })));
  const heartbeat = setInterval(() => sink.write(': keep-alive\n\n'), heartbeatMs);
  let next = afterRevision + 1;
  let closed = false;
  try {
    while (!signal.aborted) {
      const events = await store.readStream(streamIdOf(conversationId), {
        fromRevision: BigInt(next),
        maxCount: pageSize,
      });
      for (const e of events) {
        if (signal.aborted) return;
        if (!sink.write(frame({ id: String(e.revision), event: e.type, data: eventView(e) })))
          await sink.drained(signal);
        next = Number(e.revision) + 1;
        if (CLOSING_EVENTS.has(e.type)) closed = true;
      }
      // The rest of the closing append (an erasure's ConversationErased) is shown too.
      if (closed) return;
      if (events.length === pageSize) continue;
      await seat.waitBeyond(BigInt(next - 1), signal);
    }
  } finally {
    clearInterval(heartbeat);
    stopDeltas();
  }
}

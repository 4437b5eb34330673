import { ParleyError, type ParleyClient } from '@parley/client';
import { StreamHub, streamConversation } from '@parley/transport';
import type { DemoStack } from './demo-stack';

export interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** Splits a Server-Sent Events byte stream into frames; comments (keep-alives) are dropped. */
export class SseParser {
  private buffer = '';

  constructor(private readonly onFrame: (frame: Frame) => void) {}

  feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) this.onFrame({ event, data: JSON.parse(data.join('\n')) as Frame['data'] });
    }
  }
}

/**
 * Follows a conversation as a client would: @parley/client's stream (GET …/stream: stored events
 * and live text deltas) when the server mounts it; otherwise the same stream read in this process
 * from the event store and the live-delta port. Resolves once it is connected (its first event,
 * ConversationStarted, came); runs until `signal` aborts.
 */
export async function follow(
  stack: DemoStack,
  parley: ParleyClient,
  conversationId: string,
  onFrame: (frame: Frame) => void,
  signal: AbortSignal,
): Promise<'sse' | 'in-process'> {
  const frames = parley.conversations.stream(conversationId, { signal })[Symbol.asyncIterator]();
  try {
    const first = await frames.next();
    if (!first.done) onFrame(first.value as Frame);
    void (async () => {
      for (let next = await frames.next(); !next.done; next = await frames.next()) onFrame(next.value as Frame);
    })().catch(() => undefined);
    return 'sse';
  } catch (err) {
    if (!(err instanceof ParleyError && err.status === 404)) throw err;
  }
  const parser = new SseParser(onFrame);
  const hub = new StreamHub({ store: stack.store, pollMs: 200, maxPerSubject: 1, maxTotal: 1 });
  const seat = hub.open('demo', conversationId);
  const sink = {
    write: (c: string) => {
      parser.feed(c);
      return true;
    },
    drained: async () => undefined,
  };
  void streamConversation(conversationId, -1, sink, signal, {
    store: stack.store,
    live: stack.live,
    seat,
    heartbeatMs: 15_000,
  })
    .catch(() => undefined)
    .finally(() => seat.release());
  return 'in-process';
}

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
 * Follows a conversation as a client would: GET …/stream (stored events and live text deltas)
 * when the server mounts it; otherwise the same stream read in this process from the event
 * store and the live-delta port. Resolves once it is connected; runs until `signal` aborts.
 */
export async function follow(
  stack: DemoStack,
  conversationId: string,
  onFrame: (frame: Frame) => void,
  signal: AbortSignal,
): Promise<'sse' | 'in-process'> {
  const parser = new SseParser(onFrame);
  const res = await fetch(`${stack.url}/api/v1/conversations/${conversationId}/stream`, {
    headers: { authorization: `Bearer ${stack.adminKey}`, accept: 'text/event-stream' },
    signal,
  });
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    })().catch(() => undefined);
    return 'sse';
  }
  await res.body?.cancel();
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

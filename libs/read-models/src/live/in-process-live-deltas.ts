import type { LiveDelta, LiveDeltaListener, LiveDeltas } from './live-deltas.port';

/** Live deltas within one process: the all-in-one server without NATS, and tests. */
export class InProcessLiveDeltas implements LiveDeltas {
  private readonly listeners = new Map<string, Set<LiveDeltaListener>>();

  publish(conversationId: string, delta: LiveDelta): void {
    for (const listener of this.listeners.get(conversationId) ?? []) {
      try {
        listener(delta);
      } catch {
        // One broken listener (a closed SSE socket) must not starve the others.
      }
    }
  }

  subscribe(conversationId: string, listener: LiveDeltaListener): () => void {
    const set = this.listeners.get(conversationId) ?? new Set<LiveDeltaListener>();
    set.add(listener);
    this.listeners.set(conversationId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(conversationId);
    };
  }
}

/**
 * Live text deltas of a running model call: what the SSE stream shows between the stored
 * ChunksReceived batches. Best effort and never stored — a client that misses one still gets
 * the same text from the ChunksReceived event that follows.
 */
export interface LiveDelta {
  turnNo: number;
  callNo: number;
  attempt: number;
  text?: string;
  reasoning?: string;
}

export type LiveDeltaListener = (delta: LiveDelta) => void;

export interface LiveDeltas {
  /** Fire and forget: never throws, never waits for listeners. */
  publish(conversationId: string, delta: LiveDelta): void;
  /** Returns the function that stops the subscription. */
  subscribe(conversationId: string, listener: LiveDeltaListener): () => void;
}

/** Injection token for the LiveDeltas of this process (NATS when connected, in-process otherwise). */
export const LIVE_DELTAS = Symbol('parley.live-deltas');

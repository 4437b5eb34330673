import type { CommandName, QueryName } from './operations.generated';

/** One frame of a conversation's stream: a stored event (its revision is the SSE id) or a live text delta. */
export interface StreamFrame {
  /** The event's type (`ConversationCompleted`, …), or `delta` for a live text delta. */
  event: string;
  /** The stored event's revision as a string (the SSE id); absent for a delta. */
  id?: string;
  /** A stored event's view (`{revision, type, data, metadata, …}`) or a delta (`{turnNo, callNo, attempt, text}`). */
  data: unknown;
}

export interface StreamOptions {
  /** Start after this revision (exclusive): the `id` of the last frame seen. Default: from the start. */
  after?: number;
  /** Stops the stream; the iterator then ends. */
  signal?: AbortSignal;
}

/** What a turn-running command answered: the reply once the turn ended or paused, `done: false` while it goes on. */
export interface CallOptions {
  /** The command's idempotency key: HTTP's `Idempotency-Key`, NATS's `commandId`. */
  idempotencyKey?: string;
}

/** How a client reaches Parley: HTTP (`httpTransport`) or NATS (`natsTransport`), with the same surface. */
export interface ParleyTransport {
  /**
   * A command or query by its table name. Commands that run a turn answer `{body, done}`: done is
   * false where the turn goes on (HTTP's 202). Queries answer null where they find nothing.
   */
  call(
    name: CommandName | QueryName,
    input: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<{ body: unknown; done: boolean }>;
  /** The conversation's stored events after `after`, then new ones and live deltas as they come. */
  stream(conversationId: string, options?: StreamOptions): AsyncIterable<StreamFrame>;
  close(): Promise<void>;
}

/** After these a conversation takes no more commands: its stream ends. */
export const CLOSING_EVENTS: ReadonlySet<string> = new Set(['ConversationTerminated', 'ConversationKilled']);

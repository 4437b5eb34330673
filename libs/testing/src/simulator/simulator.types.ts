/**
 * The scripting vocabulary of the OpenAI-compatible simulator: what a rule matches on and
 * what the simulated model answers.
 */

/** Streaming habits of real OpenAI-compatible servers (see habits.ts for what each does). */
export const HABITS = [
  'openai',
  'vllm',
  'ollama',
  'gemini',
  'azure',
  'deepseek',
  'groq',
  'mistral',
  'lmstudio',
  'llamacpp',
] as const;
export type Habit = (typeof HABITS)[number];

/**
 * Where usage goes in a stream: a separate final chunk (only when the request asks with
 * `stream_options.include_usage`, as OpenAI does), every chunk, the finish chunk, or nowhere.
 */
export type UsagePlacement = 'final' | 'every' | 'finish' | 'none';

/** The chat-completions request body as the simulator reads it. */
export interface SimChatRequest {
  model: string;
  messages: SimMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: { type: string; function: { name: string } }[];
  [key: string]: unknown;
}

export interface SimMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface SimToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as is (e.g. malformed JSON). */
  arguments: Record<string, unknown> | string;
  /** Defaults to `call_<request number>_<position>`. */
  id?: string;
}

export interface SimFailure {
  status: number;
  /** Sent as `retry-after-ms` and, rounded up to seconds, as `retry-after`. */
  retryAfterMs?: number;
  message?: string;
  /** The error body's `code` (e.g. `context_length_exceeded`); defaults to its type. */
  code?: string;
}

export interface SimReply {
  text?: string;
  /** Sent on the habit's reasoning channel (dropped by habits that have none). */
  reasoning?: string;
  toolCalls?: SimToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: 'stop' | 'length' | 'content_filter' | 'tool_calls';
  /** Answer with an HTTP error and an OpenAI-style error body instead. */
  fail?: SimFailure;
  /** Never answer: the client has to give up. */
  hang?: boolean;
  /** Streaming: destroy the socket after this many chunks. */
  cutAfterChunks?: number;
  /** Streaming: send this many chunks, then go silent with the socket open. */
  stallAfterChunks?: number;
  /** Streaming: send this many chunks, then an OpenAI-style `{"error": …}` event, and end. */
  errorAfterChunks?: number;
  habit?: Habit;
  usage?: UsagePlacement;
  /** Reported token counts; default: about four characters a token. */
  tokens?: { prompt: number; completion: number };
}

/** Every condition given must hold. */
export interface SimMatch {
  /** The last user message (its text) matches. */
  lastUserMessage?: RegExp | string;
  /** A tool result after the last user message, for a call with this tool name and/or id. */
  toolResult?: { name?: string; id?: string };
  /** No tool result after the last user message. */
  noToolResult?: boolean;
  model?: RegExp | string;
  /** The 1-based number of chat requests since the start (or the last reset). */
  callCount?: number | ((n: number) => boolean);
  predicate?: (request: SimChatRequest) => boolean;
}

export interface SimRule {
  name?: string;
  when?: SimMatch;
  reply: SimReply | ((request: SimChatRequest, context: { callCount: number }) => SimReply);
  /** Applies to the first N requests it matches, then steps aside ("fail twice, then succeed"). */
  times?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: SimChatRequest | null;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /** Sent back as `x-request-id`, as OpenAI does: `sim-<n>`, n counting every request from 1. */
  id: string;
  /** The simulator's own time on it: the request received -> the response's last byte written. */
  durationMs?: number;
}

import type { ChatOptions, FinishReason } from '@parley/core';

/** Where and how to reach a model: resolved from the catalog at call time (holds the key). */
export interface ProviderEndpoint {
  code: string;
  /** `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`, … */
  baseUrl: string;
  apiKey: string | null;
  /** Extra headers from the provider config (e.g. Azure's api-key). */
  headers?: Record<string, string>;
}

export type LlmContentPart = { type: 'text'; text: string } | { type: 'image_url'; url: string };

export interface LlmToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model produced (may be malformed: the caller validates). */
  arguments: string;
}

export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | LlmContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * How the model is offered tools. `api`: the `tools` parameter, calls as `tool_calls`. `text`, for
 * models without a tools API: an instructions block in the prompt, calls read from the reply's
 * JSON and results sent back as messages (text-tools/); `jsonMode` also asks for a JSON reply.
 */
export type ToolProtocol = { kind: 'api' } | { kind: 'text'; jsonMode: boolean };

export interface LlmRequest {
  provider: ProviderEndpoint;
  model: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  options: ChatOptions;
  /** Absent: `api`. */
  toolProtocol?: ToolProtocol;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  /** true when the provider sent no usage and the tokenizer counted it. */
  estimated: boolean;
}

/** What one streamed model call yields, in order: deltas, then whole tool calls, then `finish` once. */
export type LlmStreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call'; call: LlmToolCall }
  | { type: 'finish'; finishReason: FinishReason; usage: LlmUsage; responseModel: string | null };

export interface LlmCallOptions {
  signal?: AbortSignal;
  /** Per-call timeout; a call past it fails with a retryable LLM timeout error. */
  timeoutMs?: number;
  /** Longest silence allowed between two chunks (unset: only `timeoutMs` applies); also a timeout error. */
  idleTimeoutMs?: number;
}

/** One attempt at a streamed chat completion. Errors are LlmError (see llm-error.ts). */
export interface LlmPort {
  stream(request: LlmRequest, options?: LlmCallOptions): AsyncIterable<LlmStreamEvent>;
}

export const LLM_PORT = Symbol('parley.llm');

/** Resolves a provider code to its endpoint and key at call time (the catalog implements it). */
export interface ProviderEndpoints {
  endpointFor(providerCode: string): Promise<ProviderEndpoint>;
}

export const PROVIDER_ENDPOINTS = Symbol('parley.provider-endpoints');

import type { ToolErrorCode } from '@parley/core';

export interface ToolCallContext {
  conversationId: string;
  /** The application code: appId of seed 002's tool-matching event. */
  appId?: string;
  /** The tool repository the tool came from (seed 002), when it came from one. */
  repositoryId?: string;
  toolCallId: string;
  /** Aborts the call (a killed conversation); the outcome is then ABORTED. */
  signal?: AbortSignal;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** A tool failure inside an executor; ToolExecutor turns it into a failed ToolOutcome. */
export class ToolFailure extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/** Optional hook for `llm_tool_call_count` and tool latency (seed 004); the metrics module provides it. */
export interface ToolMetrics {
  toolCall(kind: string, result: 'ok' | ToolErrorCode, durationMs: number): void;
}

export const TOOL_METRICS = Symbol('parley.tool-metrics');

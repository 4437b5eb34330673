import type { ToolDefinition } from '@parley/core';
import type { ToolCallContext } from './tool-outcome';

/** Output before the size limit: text, or the first bytes of a larger body and its full size. */
export interface RawOutput {
  text: string | Buffer;
  totalBytes?: number;
}

/**
 * Runs validated arguments for one kind of tool. Tool failures are thrown as ToolFailure;
 * `signal` fires on the call's timeout or abort.
 */
export interface KindExecutor {
  run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<RawOutput>;
}

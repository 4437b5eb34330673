import type { ConversationSnapshot, ToolDefinition } from '@parley/core';

/**
 * Resolves (agent, action) into the snapshot a new conversation freezes (catalog + MCP tools),
 * refusing (FORBIDDEN) a model or provider the caller may not use.
 */
export interface SnapshotSource {
  resolve(
    agentCode: string,
    actionCode: string,
    caller: { subject: string; roles: readonly string[] },
  ): Promise<ConversationSnapshot>;
  /**
   * Catalog tool codes as definitions, for a tool repository; NOT_FOUND names unknown codes,
   * FORBIDDEN those not shared with the caller.
   */
  resolveTools(toolCodes: string[], caller: { subject: string; roles: readonly string[] }): Promise<ToolDefinition[]>;
}

export const SNAPSHOT_SOURCE = Symbol('parley.snapshot-source');

import type { ConversationSnapshot } from '../snapshot';

/** Resolves (agent, action) into the snapshot a new conversation freezes (catalog + MCP tools). */
export interface SnapshotSource {
  resolve(agentCode: string, actionCode: string): Promise<ConversationSnapshot>;
}

export const SNAPSHOT_SOURCE = Symbol('parley.snapshot-source');

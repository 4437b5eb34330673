import type { ToolConfig } from './tool-config';

/**
 * Port: the decrypted execution config of a catalog tool, looked up at call time by its code
 * (the snapshot's `ref`), so secrets never sit in a conversation's events.
 */
export interface ToolConfigSource {
  configFor(toolCode: string): Promise<ToolConfig>;
}

export const TOOL_CONFIG_SOURCE = Symbol('parley.tool-config-source');

import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDefinition } from '@parley/core';

const MAX_FUNCTION_NAME = 64;

/**
 * A name valid under OpenAI's function-name rule ^[a-zA-Z0-9_-]{1,64}$. Other characters become
 * `_`; an over-long name keeps a hash of the original so two long names never collide.
 */
function functionName(clientName: string, toolName: string): string {
  const raw = `${clientName}__${toolName}`;
  const safe = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (safe.length <= MAX_FUNCTION_NAME) return safe;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 8);
  return `${safe.slice(0, MAX_FUNCTION_NAME - 9)}_${hash}`;
}

/**
 * An MCP server's tool as the model sees it; `ref` tells the executor where to send the call.
 * Never idempotent: a server's `idempotentHint` is its own claim, and an idempotent tool is run
 * again after a crash; only the catalog (a tool entry of kind mcp, set by an operator) says so.
 */
export function toToolDefinition(clientName: string, tool: Tool): ToolDefinition {
  return {
    name: functionName(clientName, tool.name),
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name,
    parameters: tool.inputSchema as Record<string, unknown>,
    kind: 'mcp',
    ref: `${clientName}/${tool.name}`,
    approval: 'never',
    idempotent: false,
    returnDirect: false,
    skipResponse: false,
  };
}

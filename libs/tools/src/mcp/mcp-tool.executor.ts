import { Inject, Injectable } from '@nestjs/common';
import type { ToolDefinition } from '@parley/core';
import { McpClientError, McpPool } from '@parley/mcp';
import type { KindExecutor, RawOutput } from '../kind-executor';
import type { ToolErrorCode } from '@parley/core';
import { ToolFailure, type ToolCallContext } from '../tool-outcome';

const CODE_BY_KIND: Record<McpClientError['kind'], ToolErrorCode> = {
  connect: 'UNAVAILABLE',
  session_lost: 'UNAVAILABLE',
  timeout: 'TIMEOUT',
  aborted: 'ABORTED',
  // A JSON-RPC error (an unknown tool, arguments the server refused) is something the model may fix.
  protocol: 'TOOL_ERROR',
};

/**
 * MCP tools: `def.ref` is `<mcpClientName>/<toolName>`. A result the server flags isError is a
 * failed outcome (TOOL_ERROR carrying the server's text), so the turn counts it as a failure.
 */
@Injectable()
export class McpToolExecutor implements KindExecutor {
  constructor(@Inject(McpPool) private readonly pool: McpPool) {}

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<RawOutput> {
    const slash = def.ref.indexOf('/');
    if (slash <= 0) throw new ToolFailure('UNAVAILABLE', `Tool '${def.name}' names no MCP client (ref '${def.ref}').`);
    const [client, tool] = [def.ref.slice(0, slash), def.ref.slice(slash + 1)];
    try {
      const result = await this.pool.callTool(client, tool, args, { signal, timeoutMs: ctx.timeoutMs });
      if (result.isError)
        throw new ToolFailure('TOOL_ERROR', result.content || `Tool '${def.name}' reported an error.`);
      return { text: result.content };
    } catch (err) {
      if (err instanceof McpClientError) throw new ToolFailure(CODE_BY_KIND[err.kind], err.message);
      throw err;
    }
  }
}

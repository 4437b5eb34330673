import { Inject, Injectable } from '@nestjs/common';
import { SnapshotResolver } from '@parley/catalog';
import type { SnapshotSource } from '@parley/conversation';
import type { ConversationSnapshot, ToolDefinition } from '@parley/core';
import { McpPool } from '@parley/mcp';
import { DomainError } from '@parley/core';

/**
 * The snapshot a new conversation freezes: the catalog's resolution plus the tools its MCP
 * clients list right now, so a replay never depends on what a server offers later.
 */
@Injectable()
export class RuntimeSnapshotSource implements SnapshotSource {
  constructor(
    @Inject(SnapshotResolver) private readonly resolver: SnapshotResolver,
    @Inject(McpPool) private readonly mcp: McpPool,
  ) {}

  async resolve(
    agentCode: string,
    actionCode: string,
    caller: { subject: string; roles: readonly string[] },
  ): Promise<ConversationSnapshot> {
    const snapshot = await this.resolver.resolve(agentCode, actionCode, caller);
    const clients = snapshot.mcpClients ?? [];
    if (clients.length === 0) return snapshot;
    const listed = await Promise.all(
      clients.map((name) =>
        this.mcp.listTools(name).catch((err: unknown) => {
          throw new DomainError(
            'SERVICE_UNAVAILABLE',
            `MCP client '${name}' could not list its tools: ${(err as Error).message}`,
            {
              mcpClient: name,
            },
          );
        }),
      ),
    );
    const names = new Set(snapshot.tools.map((t) => t.name));
    const mcpTools = listed
      .flat()
      .filter((t) => !names.has(t.name))
      .map((t) => withOutputSchema(withApproval(t, snapshot.mcpApprovals), snapshot.mcpOutputSchemas));
    return { ...snapshot, tools: [...snapshot.tools, ...mcpTools] };
  }

  resolveTools(toolCodes: string[], caller: { subject: string; roles: readonly string[] }): Promise<ToolDefinition[]> {
    return this.resolver.resolveTools(toolCodes, caller);
  }
}

/** An MCP tool its client's requireApproval names (or `*`) waits for approval. */
function withApproval(tool: ToolDefinition, approvals: Record<string, string[]> | undefined): ToolDefinition {
  const slash = tool.ref.indexOf('/');
  const names = approvals?.[tool.ref.slice(0, slash)] ?? [];
  const name = tool.ref.slice(slash + 1);
  return names.includes('*') || names.includes(name) ? { ...tool, approval: 'always' } : tool;
}

/** An MCP tool of a client with an llmSchemaOutput answers with output that must match it. */
function withOutputSchema(
  tool: ToolDefinition,
  schemas: Record<string, Record<string, unknown>> | undefined,
): ToolDefinition {
  const schema = schemas?.[tool.ref.slice(0, tool.ref.indexOf('/'))];
  return schema ? { ...tool, outputSchema: schema } : tool;
}

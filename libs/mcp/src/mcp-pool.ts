import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { ToolDefinition } from '@parley/core';
import {
  MCP_CLIENT_CONFIG_SOURCE,
  MCP_METRICS,
  type McpClientConfigSource,
  type McpMetrics,
} from './mcp-client-config';
import { McpClientError } from './mcp-client.error';
import { McpLink, type CallOptions } from './mcp-link';
import { toToolDefinition } from './mcp-tool-definition';
import { toToolResult, type McpToolResult } from './mcp-tool-result';

const LIST_TIMEOUT_MS = 30_000;

/**
 * One MCP client per McpClient entity, kept across conversations (seed 000's MCP-client
 * resolution): opened on first use, reconnected when its server restarts, closed on shutdown.
 */
@Injectable()
export class McpPool implements OnApplicationShutdown {
  private readonly logger = new Logger('McpPool');
  private readonly links = new Map<string, McpLink>();
  private closed = false;

  constructor(
    @Inject(MCP_CLIENT_CONFIG_SOURCE) private readonly source: McpClientConfigSource,
    @Optional() @Inject(MCP_METRICS) private readonly metrics: McpMetrics | null = null,
  ) {}

  /** The server's tools as the model sees them; cached until the server says its list changed. */
  async listTools(clientName: string, options: Partial<CallOptions> = {}): Promise<ToolDefinition[]> {
    const tools = await this.link(clientName).listTools({ timeoutMs: LIST_TIMEOUT_MS, ...options });
    return tools.map((tool) => toToolDefinition(clientName, tool));
  }

  /**
   * Calls one tool. Resolves with the tool's result even when it reports `isError`; rejects
   * with McpClientError only when the server could not run it (unreachable, timeout, abort).
   */
  async callTool(
    clientName: string,
    toolName: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<McpToolResult> {
    return toToolResult(await this.link(clientName).callTool(toolName, args, options));
  }

  async close(): Promise<void> {
    this.closed = true;
    const links = [...this.links.values()];
    this.links.clear();
    await Promise.all(links.map((link) => link.close()));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private link(name: string): McpLink {
    if (this.closed) throw new McpClientError('connect', name, 'The MCP client pool is shut down.');
    let link = this.links.get(name);
    if (!link) {
      link = new McpLink(name, {
        source: this.source,
        metrics: this.metrics,
        log: (level, message) => this.logger[level](message),
      });
      this.links.set(name, link);
    }
    return link;
  }
}

/**
 * How to reach one MCP server, resolved from the catalog's McpClient entity (seed 000:
 * mcpTransportType ST stdio, SH streamable HTTP, SE SSE; mcpConnectionUrl for SH and SE).
 */
export interface McpClientConfig {
  name: string;
  transport: 'ST' | 'SH' | 'SE';
  /** stdio: the executable and its arguments. */
  command?: string;
  args?: string[];
  /** stdio: variables added to the safe default environment the child inherits. */
  env?: Record<string, string>;
  cwd?: string;
  /** SH and SE: the server's endpoint. */
  url?: string;
  /** SH and SE: headers sent with every request (e.g. an API key the server expects). */
  headers?: Record<string, string>;
}

/** Port: the pool asks it for a client's connection settings the first time the client is used. */
export interface McpClientConfigSource {
  configFor(name: string): Promise<McpClientConfig>;
}

export const MCP_CLIENT_CONFIG_SOURCE = Symbol('parley.mcp-client-config-source');

export type McpErrorKind = 'connect' | 'session_lost' | 'timeout' | 'aborted' | 'protocol';

/** Optional hook for `llm_mcp_errors_total` (seed 004); the metrics module provides it. */
export interface McpMetrics {
  error(clientName: string, kind: McpErrorKind): void;
}

export const MCP_METRICS = Symbol('parley.mcp-metrics');

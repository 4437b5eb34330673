export {
  MCP_CLIENT_CONFIG_SOURCE,
  MCP_METRICS,
  type McpClientConfig,
  type McpClientConfigSource,
  type McpErrorKind,
  type McpMetrics,
} from './mcp-client-config';
export { McpClientError } from './mcp-client.error';
export { McpPool } from './mcp-pool';
export { McpModule } from './mcp.module';
export type { CallOptions as McpCallOptions } from './mcp-link';
export type { McpToolResult } from './mcp-tool-result';
export { functionName as mcpFunctionName } from './mcp-tool-definition';

export { MCP_CLIENT_CONFIG_SOURCE, MCP_METRICS, type McpClientConfig, type McpMetrics } from './mcp-client-config';
export { McpClientError } from './mcp-client.error';
export { McpPool } from './mcp-pool';
export { McpModule } from './mcp.module';

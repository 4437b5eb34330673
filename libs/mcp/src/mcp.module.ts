import { Module } from '@nestjs/common';
import { McpPool } from './mcp-pool';

/**
 * Exports the one McpPool of the app (every importer shares it). MCP_CLIENT_CONFIG_SOURCE, and
 * optionally MCP_METRICS, come from a global module (the catalog's, the metrics module's).
 */
@Module({ providers: [McpPool], exports: [McpPool] })
export class McpModule {}

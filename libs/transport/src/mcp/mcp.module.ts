import { Module } from '@nestjs/common';
import { LiveDeltasModule } from '@parley/read-models';
import { McpController } from './mcp.controller';

/**
 * Parley as an MCP server on `/mcp` (streamable HTTP) and `/mcp/sse` (legacy SSE): its tools and
 * resources run through JSON-RPC's dispatcher, so it needs JsonRpcModule, and the process must
 * serve both tables (the all-in-one server); AuthModule for the credential.
 */
@Module({
  imports: [LiveDeltasModule],
  controllers: [McpController],
})
export class McpServerModule {}

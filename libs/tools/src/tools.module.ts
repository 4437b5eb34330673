import { Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { McpModule } from '@parley/mcp';
import { OrderStatusTool } from './builtin/order-status.tool';
import { EmitterToolExecutor } from './emitter/emitter-tool.executor';
import { EVENT_PUBLISHER, NatsEventPublisher } from './emitter/event-publisher';
import { HttpToolExecutor } from './http/http-tool.executor';
import { McpToolExecutor } from './mcp/mcp-tool.executor';
import { InProcessToolExecutor } from './registry/in-process-tool.executor';
import { ToolRegistry } from './registry/tool-registry';
import { RemoteToolPublisher } from './remote/remote-publisher';
import { RemoteToolInvoker } from './remote/remote-tool.invoker';
import { ToolExecutor } from './tool-executor';
import { ArgumentValidator } from './validation/argument-validator';

const providers: Provider[] = [
  ArgumentValidator,
  ToolRegistry,
  InProcessToolExecutor,
  HttpToolExecutor,
  EmitterToolExecutor,
  McpToolExecutor,
  { provide: EVENT_PUBLISHER, useClass: NatsEventPublisher },
  OrderStatusTool,
  ToolExecutor,
  RemoteToolPublisher,
  RemoteToolInvoker,
];

/**
 * Exports ToolExecutor, RemoteToolInvoker and ToolRegistry (and re-exports McpModule). Needs from global modules:
 * CONFIG, NATS_LINK, TOOL_CONFIG_SOURCE and MCP_CLIENT_CONFIG_SOURCE; TOOL_METRICS and
 * MCP_METRICS when present. In-process tools are @ParleyTool providers of any module.
 */
@Module({
  imports: [DiscoveryModule, McpModule],
  providers,
  exports: [ToolExecutor, ToolRegistry, RemoteToolInvoker, McpModule],
})
export class ToolsModule {}

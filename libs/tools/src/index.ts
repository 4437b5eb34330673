export * from './tool-config';
export { TOOL_CONFIG_SOURCE, type ToolConfigSource } from './tool-config.source';
export { TOOL_METRICS, ToolFailure, type ToolCallContext, type ToolMetrics, type ToolOutcome } from './tool-outcome';
export { ToolExecutor } from './tool-executor';
export { ToolsModule } from './tools.module';
export { ToolMetricsModule } from './tool-metrics.module';
export { ToolRegistry, type RegisteredTool } from './registry/tool-registry';
export {
  ParleyTool,
  type InProcessTool,
  type InProcessToolContext,
  type ParleyToolOptions,
} from './registry/parley-tool.decorator';
export { OrderStatusTool, type OrderStatus } from './builtin/order-status.tool';
export { ArgumentValidator } from './validation/argument-validator';
export { toolMatchingEvent, toolValues, type ToolMatchingEvent } from './tool-values';
export { limitOutput } from './output/limit-output';

export { toolConfigSchema, TOOL_SECRET_PATHS, type ToolConfig, type ToolParameter } from './tool-config';
export { TOOL_CONFIG_SOURCE } from './tool-config.source';
export { ToolExecutor } from './tool-executor';
export { AttachmentUrlPolicy } from './http/attachment-url-policy';
export { ToolsModule } from './tools.module';
export { ToolMetricsModule } from './tool-metrics.module';
export { HostAllowList } from './http/host-allow-list';
export {
  RemoteToolInvoker,
  correlationIdOf,
  type RemoteInvocation,
  type RemoteResult,
} from './remote/remote-tool.invoker';
export {
  skillCompletionSchema,
  replySubjectOf,
  replyStreamName,
  invocationStreamName,
  conversationOfReply,
  type SkillCompletionEvent,
  type SkillInvocationEvent,
} from './remote/skill-events';
export { limitOutput } from './output/limit-output';
export { TOOL_METRICS, type ToolMetrics } from './tool-outcome';

import { Global, Module } from '@nestjs/common';
import { MCP_METRICS, type McpMetrics } from '@parley/mcp';
import { MetricsService } from '@parley/observability';
import type { ToolErrorCode } from '@parley/core';
import { TOOL_METRICS, type ToolMetrics } from './tool-outcome';

/** The metric's outcome label stays small and bounded: a code the model caused is still an error. */
const OUTCOME: Record<'ok' | ToolErrorCode, 'ok' | 'error' | 'rejected' | 'timeout'> = {
  ok: 'ok',
  TIMEOUT: 'timeout',
  NOT_ALLOWED: 'rejected',
  INVALID_ARGUMENTS: 'error',
  INVALID_OUTPUT: 'error',
  TOOL_ERROR: 'error',
  UNAVAILABLE: 'error',
  ABORTED: 'error',
  INTERRUPTED: 'error',
};

export const toolMetricsOf = (metrics: MetricsService): ToolMetrics => ({
  toolCall: (kind, result) => metrics.recordToolCall({ kind, outcome: OUTCOME[result] }),
});

export const mcpMetricsOf = (metrics: MetricsService): McpMetrics => ({
  error: (client, kind) => metrics.recordMcpError({ client, kind }),
});

/**
 * Seed 004's `llm_tool_call_count` and `llm_mcp_errors_total`: TOOL_METRICS and MCP_METRICS
 * backed by the MetricsService of the (global) ObservabilityModule. Import it once per app.
 */
@Global()
@Module({
  providers: [
    { provide: TOOL_METRICS, useFactory: toolMetricsOf, inject: [MetricsService] },
    { provide: MCP_METRICS, useFactory: mcpMetricsOf, inject: [MetricsService] },
  ],
  exports: [TOOL_METRICS, MCP_METRICS],
})
export class ToolMetricsModule {}

import { MetricsService } from '@parley/observability';
import { mcpMetricsOf, toolMetricsOf } from './tool-metrics.module';

describe('tool and MCP metrics', () => {
  it('counts tool calls by kind and a bounded outcome', async () => {
    const metrics = new MetricsService();
    const tools = toolMetricsOf(metrics);
    tools.toolCall('mcp', 'ok', 12);
    tools.toolCall('mcp', 'ok', 3);
    tools.toolCall('http', 'TIMEOUT', 30_000);
    tools.toolCall('http', 'TOOL_ERROR', 5);
    const text = await metrics.render();
    expect(text).toContain('llm_tool_call_count{kind="mcp",outcome="ok"} 2');
    expect(text).toContain('llm_tool_call_count{kind="http",outcome="timeout"} 1');
    expect(text).toContain('llm_tool_call_count{kind="http",outcome="error"} 1');
  });

  it('counts MCP errors by client and kind', async () => {
    const metrics = new MetricsService();
    mcpMetricsOf(metrics).error('everything', 'session_lost');
    expect(await metrics.render()).toContain('llm_mcp_errors_total{client="everything",kind="session_lost"} 1');
  });
});

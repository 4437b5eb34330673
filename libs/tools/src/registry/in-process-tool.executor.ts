import { Inject, Injectable } from '@nestjs/common';
import type { ToolDefinition } from '@parley/core';
import { configOfKind } from '../config-of-kind';
import type { KindExecutor, RawOutput } from '../kind-executor';
import { TOOL_CONFIG_SOURCE, type ToolConfigSource } from '../tool-config.source';
import { ToolFailure, type ToolCallContext } from '../tool-outcome';
import { ToolRegistry } from './tool-registry';

/** In-process tools: the registered provider named by the catalog config's beanName. */
@Injectable()
export class InProcessToolExecutor implements KindExecutor {
  constructor(
    @Inject(TOOL_CONFIG_SOURCE) private readonly configs: ToolConfigSource,
    @Inject(ToolRegistry) private readonly registry: ToolRegistry,
  ) {}

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<RawOutput> {
    const { beanName } = await configOfKind(this.configs, def, 'in_process');
    const tool = this.registry.get(beanName);
    if (!tool) throw new ToolFailure('UNAVAILABLE', `No in-process tool is registered as '${beanName}'.`);
    let result: unknown;
    try {
      result = await tool.impl.execute(args, {
        conversationId: ctx.conversationId,
        appId: ctx.appId,
        toolCallId: ctx.toolCallId,
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ToolFailure('TOOL_ERROR', err instanceof Error ? err.message : String(err));
    }
    return { text: typeof result === 'string' ? result : (JSON.stringify(result) ?? '') };
  }
}

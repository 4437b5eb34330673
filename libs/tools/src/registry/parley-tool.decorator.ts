import { DiscoveryService } from '@nestjs/core';

/** How an in-process tool is registered; the catalog's in_process config names it by `name`. */
export interface ParleyToolOptions {
  /** The bean name (seed 000's llmToolBeanName). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments, offered to the catalog as the tool's default parameters. */
  parameters?: Record<string, unknown>;
}

/** What the model's call reaches: already-validated arguments and the call's context. */
export interface InProcessToolContext {
  conversationId: string;
  appId?: string;
  toolCallId: string;
  signal: AbortSignal;
}

/**
 * An in-process tool (the seed's tool bean). It returns a string, or any JSON value the model
 * reads as JSON; throwing is a tool error the model sees.
 */
export interface InProcessTool {
  execute(args: Record<string, unknown>, ctx: InProcessToolContext): unknown;
}

/** Marks an injectable class as an in-process tool; ToolRegistry finds it at module init. */
export const ParleyTool = DiscoveryService.createDecorator<ParleyToolOptions>();

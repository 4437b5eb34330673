import type { ToolParameter } from './tool-config';

/**
 * The values a call carries (seed 002's parameters): the model's arguments, minus parameters
 * marked `ignore` (never taken from the model), overridden by each parameter's static `value`.
 */
export function toolValues(args: Record<string, unknown>, schema: readonly ToolParameter[]): Record<string, unknown> {
  const ignored = new Set(schema.filter((p) => p.ignore).map((p) => p.parameter));
  const values = Object.fromEntries(Object.entries(args).filter(([name]) => !ignored.has(name)));
  for (const p of schema) if (p.value !== undefined) values[p.parameter] = p.value;
  return values;
}

/** Seed 002's tool-matching event: what an emitter publishes and a default HTTP tool POSTs. */
export interface ToolMatchingEvent {
  appId: string | null;
  /** The conversation id. */
  sessionId: string;
  repositoryId?: string;
  source: 'agent';
  name: string;
  schema: ToolParameter[];
  values: Record<string, unknown>;
}

export function toolMatchingEvent(
  name: string,
  schema: ToolParameter[],
  values: Record<string, unknown>,
  ctx: { conversationId: string; appId?: string; repositoryId?: string },
): ToolMatchingEvent {
  return {
    appId: ctx.appId ?? null,
    sessionId: ctx.conversationId,
    ...(ctx.repositoryId ? { repositoryId: ctx.repositoryId } : {}),
    source: 'agent',
    name,
    schema,
    values,
  };
}

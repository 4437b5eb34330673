import { Inject, Injectable } from '@nestjs/common';
import type { ToolDefinition } from '@parley/core';
import { configOfKind } from '../config-of-kind';
import type { KindExecutor, RawOutput } from '../kind-executor';
import { TOOL_CONFIG_SOURCE, type ToolConfigSource } from '../tool-config.source';
import { ToolFailure, type ToolCallContext } from '../tool-outcome';
import { toolMatchingEvent, toolValues } from '../tool-values';
import { EVENT_PUBLISHER, type EventPublisher } from './event-publisher';

/** Emitter tools (seed 002): the tool-matching event goes to the `<resource>.<scope>` subject. */
@Injectable()
export class EmitterToolExecutor implements KindExecutor {
  constructor(
    @Inject(TOOL_CONFIG_SOURCE) private readonly configs: ToolConfigSource,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
  ) {}

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<RawOutput> {
    const config = await configOfKind(this.configs, def, 'emitter');
    if (!this.publisher.available) {
      throw new ToolFailure('UNAVAILABLE', `Tool '${def.name}' publishes events, but the event broker (NATS) is off.`);
    }
    const event = toolMatchingEvent(def.name, config.schema, toolValues(args, config.schema), ctx);
    try {
      await this.publisher.publish(config.emitter, event, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ToolFailure(
        'UNAVAILABLE',
        `The event for tool '${def.name}' could not be published: ${(err as Error).message}`,
      );
    }
    return { text: `Event '${def.name}' was sent to ${config.emitter}.` };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
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
    @Inject(CONFIG) private readonly config: Config,
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
    // Parley's NATS user may publish live deltas and integration events: a catalog entry must
    // not turn a tool into a way to forge them, nor answer someone's request in its inbox.
    const { prefix } = this.config;
    if (config.emitter.startsWith(`${prefix}.`) || config.emitter.startsWith('_INBOX')) {
      throw new ToolFailure(
        'NOT_ALLOWED',
        `Tool '${def.name}' may not publish to ${config.emitter}: the ${prefix}.* and _INBOX subjects are Parley's own.`,
      );
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

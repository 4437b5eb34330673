import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { ToolDefinition, ToolErrorCode, ToolOutcome } from '@parley/core';
import { v5 as uuidv5 } from 'uuid';
import { configOfKind } from '../config-of-kind';
import { limitOutput } from '../output/limit-output';
import { TOOL_CONFIG_SOURCE, type ToolConfigSource } from '../tool-config.source';
import { TOOL_METRICS, ToolFailure, type ToolMetrics } from '../tool-outcome';
import { toolValues } from '../tool-values';
import { ArgumentValidator } from '../validation/argument-validator';
import { RemoteToolPublisher } from './remote-publisher';
import { replySubjectOf, type SkillCompletionEvent, type SkillInvocationEvent } from './skill-events';

/** Namespace of correlation ids: one per conversation and tool call, the same on every try. */
const CORRELATION_NAMESPACE = '6f1c1e0a-4b7d-4c55-9a53-2f3e0c8d7a11';

/** The correlation id of a remote call: the same for every publish of the same call. */
export const correlationIdOf = (conversationId: string, toolCallId: string): string =>
  uuidv5(`${conversationId}/${toolCallId}`, CORRELATION_NAMESPACE);

/** What a completion settles the waiting call with: its text within the output limit, or why it failed. */
export type RemoteResult =
  { ok: true; output: string; truncated: boolean } | { ok: false; error: { code: ToolErrorCode; message: string } };

export type RemoteInvocation =
  | { ok: true; correlationId: string; subject: string; deadline: string }
  | { ok: false; outcome: Extract<ToolOutcome, { ok: false }> };

/**
 * Publishes a remote tool call (SkillInvocationEvent) and returns what the turn waits for; the
 * answer comes later on the reply subject. A call that cannot be published is a failed outcome
 * the model reads, as for any tool. Publishing the same call again (a worker that died before
 * recording it) reuses its correlation id, which JetStream deduplicates.
 */
@Injectable()
export class RemoteToolInvoker {
  constructor(
    @Inject(ArgumentValidator) private readonly validator: ArgumentValidator,
    @Inject(TOOL_CONFIG_SOURCE) private readonly configs: ToolConfigSource,
    @Inject(RemoteToolPublisher) private readonly publisher: RemoteToolPublisher,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(TOOL_METRICS) private readonly metrics: ToolMetrics | null = null,
  ) {}

  /** `turnDeadline`: epoch ms where the turn's time runs out; the call's deadline is no later. */
  async invoke(
    def: ToolDefinition,
    rawArguments: string,
    ctx: { conversationId: string; toolCallId: string; turnDeadline: number },
  ): Promise<RemoteInvocation> {
    const started = performance.now();
    try {
      const args = this.validator.parse(rawArguments, def.parameters);
      const config = await configOfKind(this.configs, def, 'remote');
      const { prefix } = this.config;
      if (config.subject.startsWith(`${prefix}.`) || config.subject.startsWith('_INBOX'))
        throw new ToolFailure(
          'NOT_ALLOWED',
          `Tool '${def.name}' may not publish to ${config.subject}: the ${prefix}.* and _INBOX subjects are Parley's own.`,
        );
      if (!this.publisher.available)
        throw new ToolFailure('UNAVAILABLE', `Tool '${def.name}' is remote, but the event broker (NATS) is off.`);
      const waitMs = config.timeoutMs ?? this.config.turn.toolCallTimeoutMs;
      const deadline = new Date(Math.min(Date.now() + waitMs, ctx.turnDeadline)).toISOString();
      const correlationId = correlationIdOf(ctx.conversationId, ctx.toolCallId);
      const event: SkillInvocationEvent = {
        correlationId,
        skillName: config.skillName ?? def.ref,
        arguments: toolValues(args, config.schema),
        replyTo: replySubjectOf(prefix, ctx.conversationId),
        conversationId: ctx.conversationId,
        toolCallId: ctx.toolCallId,
        deadline,
      };
      try {
        await this.publisher.publish(config.subject, event, correlationId);
      } catch (err) {
        throw new ToolFailure(
          'UNAVAILABLE',
          `The call of remote tool '${def.name}' could not be published: ${(err as Error).message}`,
        );
      }
      return { ok: true, correlationId, subject: config.subject, deadline };
    } catch (err) {
      if (!(err instanceof ToolFailure)) throw err;
      const durationMs = Math.round(performance.now() - started);
      this.metrics?.toolCall('remote', err.code, durationMs);
      return { ok: false, outcome: { ok: false, error: { code: err.code, message: err.message }, durationMs } };
    }
  }

  /**
   * The outcome a service's completion gives the call of `def` (null: the tool is no longer in the
   * snapshot): the service's error as TOOL_ERROR; else its result as text, checked against the
   * tool's output schema as an executed tool's is (INVALID_OUTPUT, naming each problem, when it
   * does not match), then cut to `maxOutputBytes`.
   */
  settle(def: ToolDefinition | null, completion: SkillCompletionEvent, maxOutputBytes: number): RemoteResult {
    if ('error' in completion) {
      const code = completion.error.code ? ` (${completion.error.code})` : '';
      return { ok: false, error: { code: 'TOOL_ERROR', message: `${completion.error.message}${code}` } };
    }
    const text = typeof completion.result === 'string' ? completion.result : JSON.stringify(completion.result);
    try {
      if (def?.outputSchema) this.validator.checkOutput(text, def.outputSchema, def.name);
    } catch (err) {
      if (!(err instanceof ToolFailure)) throw err;
      return { ok: false, error: { code: err.code, message: err.message } };
    }
    return { ok: true, ...limitOutput(text, maxOutputBytes) };
  }
}

import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { ToolDefinition, ToolErrorCode, ToolKind, ToolOutcome } from '@parley/core';
import { timeoutTimer } from '@parley/platform';
import { EmitterToolExecutor } from './emitter/emitter-tool.executor';
import { HttpToolExecutor } from './http/http-tool.executor';
import type { KindExecutor } from './kind-executor';
import { McpToolExecutor } from './mcp/mcp-tool.executor';
import { limitOutput } from './output/limit-output';
import { InProcessToolExecutor } from './registry/in-process-tool.executor';
import { TOOL_METRICS, ToolFailure, type ToolCallContext, type ToolMetrics } from './tool-outcome';
import { ArgumentValidator } from './validation/argument-validator';

/**
 * Runs one tool call the model made: validates the arguments against the tool's JSON Schema,
 * dispatches by kind under the call's timeout and abort signal, and limits the output. Never
 * throws for a failing tool: the outcome says what went wrong, in words for the model.
 */
@Injectable()
export class ToolExecutor {
  private readonly logger = new Logger('ToolExecutor');
  private readonly byKind: Partial<Record<ToolKind, KindExecutor>>;

  constructor(
    @Inject(ArgumentValidator) private readonly validator: ArgumentValidator,
    @Inject(InProcessToolExecutor) inProcess: InProcessToolExecutor,
    @Inject(HttpToolExecutor) http: HttpToolExecutor,
    @Inject(EmitterToolExecutor) emitter: EmitterToolExecutor,
    @Inject(McpToolExecutor) mcp: McpToolExecutor,
    @Optional() @Inject(TOOL_METRICS) private readonly metrics: ToolMetrics | null = null,
  ) {
    this.byKind = { in_process: inProcess, http, emitter, mcp };
  }

  async execute(def: ToolDefinition, rawArguments: string, ctx: ToolCallContext): Promise<ToolOutcome> {
    const started = performance.now();
    const timer = timeoutTimer(ctx.timeoutMs);
    const timeout = timer.signal;
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
    let outcome: ToolOutcome;
    try {
      const executor = this.byKind[def.kind];
      // ask_user_question, skill, memory and remote calls are the turn loop's to handle, never executed here.
      if (!executor)
        throw new ToolFailure('NOT_ALLOWED', `Tool '${def.name}' (${def.kind}) cannot be executed directly.`);
      const args = this.validator.parse(rawArguments, def.parameters);
      const raw = await raceAbort(executor.run(def, args, ctx, signal), signal);
      if (def.outputSchema) this.validator.checkOutput(raw.text.toString(), def.outputSchema, def.name);
      const { output, truncated } = limitOutput(raw.text, ctx.maxOutputBytes, raw.totalBytes);
      outcome = {
        ok: true,
        output,
        truncated,
        durationMs: 0,
        returnDirect: def.returnDirect,
        skipResponse: def.skipResponse,
      };
    } catch (err) {
      outcome = { ok: false, error: this.failureOf(err, def, ctx, timeout), durationMs: 0 };
    } finally {
      timer.clear();
    }
    outcome.durationMs = Math.round(performance.now() - started);
    this.metrics?.toolCall(def.kind, outcome.ok ? 'ok' : outcome.error.code, outcome.durationMs);
    return outcome;
  }

  private failureOf(
    err: unknown,
    def: ToolDefinition,
    ctx: ToolCallContext,
    timeout: AbortSignal,
  ): { code: ToolErrorCode; message: string } {
    // The signals decide first: an executor may report the same event as its own failure.
    if (ctx.signal?.aborted) return { code: 'ABORTED', message: `The call to '${def.name}' was aborted.` };
    if (timeout.aborted)
      return { code: 'TIMEOUT', message: `Tool '${def.name}' did not answer within ${ctx.timeoutMs} ms.` };
    if (err instanceof ToolFailure)
      return { code: err.code, message: limitOutput(err.message, ctx.maxOutputBytes).output };
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn(`Tool '${def.name}' (${def.kind}) failed unexpectedly: ${message}`);
    return { code: 'UNAVAILABLE', message: `Tool '${def.name}' could not be run: ${message}` };
  }
}

/** Settles with the signal's reason once it fires, even if the work ignores the signal. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

import { Logger } from '@nestjs/common';
import type { ConversationEvent, ModelCallPlan } from '@parley/domain';
import {
  modelStepLine,
  type LlmAttemptFailure,
  type LlmCallHooks,
  type LlmCallResult,
  type LlmError,
  type LlmStreamEvent,
  type ModelStep,
} from '@parley/llm';
import { currentTraceId } from '@parley/observability';
import { ChunkBuffer } from './chunk-buffer';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

const logger = new Logger('ModelCall');

/**
 * Records one model call as it happens, through the LLM client's hooks: each attempt's start and
 * its streamed deltas in ChunksReceived batches (published live as they come), each failed
 * attempt with its retry, and the metrics and logs of every outcome, with one line for the step
 * (modelStepLine). What the call's outcome should carry (the open batches, the attempt's start)
 * is handed over by `drain`.
 */
export class ModelCallRecorder implements LlmCallHooks {
  private buffer: ChunkBuffer | null = null;
  private readonly startedAt = Date.now();

  constructor(
    private readonly ctx: TurnContext,
    private readonly deps: TurnDeps,
    private readonly plan: ModelCallPlan,
    private readonly signal: AbortSignal,
  ) {}

  /** The attempt number on record: counting on from an attempt a crashed worker left open. */
  attemptOf(clientAttempt: number): number {
    return this.plan.firstAttempt + clientAttempt - 1;
  }

  onAttemptStart(clientAttempt: number): void {
    const { callNo } = this.plan;
    const attempt = this.attemptOf(clientAttempt);
    this.buffer?.discard();
    const [started] = this.ctx.decide({ type: 'StartModelAttempt', data: { callNo, attempt } });
    this.buffer = new ChunkBuffer(
      this.ctx,
      (chunks) => this.ctx.decide({ type: 'RecordChunks', data: { callNo, attempt, ...chunks } })[0],
      started,
      {
        firstMs: this.deps.config.turn.streamEventFirstMs,
        windowMs: this.deps.config.turn.streamEventWindowMs,
        maxWindowMs: this.deps.config.turn.streamEventMaxWindowMs,
        maxChars: this.deps.config.turn.streamEventMaxChars,
      },
    );
  }

  onEvent(event: LlmStreamEvent, clientAttempt: number): void {
    if (event.type !== 'text' && event.type !== 'reasoning') return;
    this.buffer?.add(event.type, event.delta);
    const c = this.ctx.state;
    this.deps.live?.publish(c.id, {
      turnNo: c.turn!.no,
      callNo: this.plan.callNo,
      attempt: this.attemptOf(clientAttempt),
      [event.type]: event.delta,
    });
  }

  async onAttemptFailed(error: LlmError, failure: LlmAttemptFailure): Promise<void> {
    const { callNo } = this.plan;
    const attempt = this.attemptOf(failure.attempt);
    const { model } = this.ctx.state.snapshot;
    logger.warn(
      `model ${model.name} (${model.providerCode}) call ${callNo} attempt ${attempt} of turn ${this.ctx.state.turn!.no} in ${this.ctx.conversationId} failed (${error.kind}${failure.willRetry ? `, retrying in ${failure.delayMs} ms` : ''}): ${error.message}`,
    );
    this.deps.metrics?.recordLlmRequest(
      { provider: model.providerCode, model: model.name, outcome: error.kind === 'timeout' ? 'timeout' : 'error' },
      0,
    );
    if (!failure.willRetry) this.logStep({ outcome: 'error', attempts: failure.attempt });
    const { kind, message, status, retryable } = error;
    const events: ConversationEvent[] = [
      ...this.drain(),
      ...this.ctx.decide({
        type: 'RecordModelAttemptFailed',
        data: {
          callNo,
          attempt,
          error: { kind, message, ...(status === undefined ? {} : { status }), retryable },
          retryInMs: failure.willRetry ? failure.delayMs : null,
        },
      }),
    ];
    if (!this.signal.aborted) await this.ctx.append(events);
  }

  /** The metrics of the call that succeeded. */
  succeeded(result: LlmCallResult): void {
    const { model } = this.ctx.state.snapshot;
    this.deps.metrics?.recordLlmRequest(
      { provider: model.providerCode, model: model.name, outcome: 'ok' },
      result.latencyMs,
    );
    this.deps.metrics?.recordTokenUsage(model.name, {
      input: result.usage.inputTokens,
      output: result.usage.outputTokens,
    });
    this.logStep({
      outcome: 'ok',
      attempts: result.attempts,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      finishReason: result.finishReason,
    });
  }

  /** The step's log line; the turn's trace id is the command's (see TurnWorker). */
  private logStep(step: Omit<ModelStep, 'modelName' | 'toolStep' | 'latencyMs' | 'traceId'>): void {
    const c = this.ctx.state;
    const line = modelStepLine(
      {
        modelName: c.snapshot.model.name,
        toolStep: this.plan.callNo - 1,
        latencyMs: Date.now() - this.startedAt,
        traceId: currentTraceId(),
        ...step,
      },
      { conversation_id: c.id, turn_no: c.turn!.no, call_no: this.plan.callNo },
    );
    logger.log(line);
  }

  /** Hands over what is not stored yet (the attempt's start, its open batches), to go with the call's outcome. */
  drain(): ConversationEvent[] {
    return this.buffer?.drain() ?? [];
  }
}

/** One model call of a tool loop (a conversation's turn, a generate call), as its log line tells it. */
export interface ModelStep {
  modelName: string;
  /** Tool rounds before this call: 0 for the first call of a turn, 1 after one round of tools… */
  toolStep: number;
  /** The whole call, its retries included. */
  latencyMs: number;
  /** The caller's trace id when it gave one, else the OpenTelemetry trace's. */
  traceId?: string;
  outcome: 'ok' | 'error';
  attempts: number;
  inputTokens?: number;
  outputTokens?: number;
  finishReason?: string;
}

/**
 * The fields of a model step's log line (seed 004 §10.4: model, tool step, latency of the step,
 * trace id), in the snake_case of Parley's JSON logs; `context` adds the caller's own keys.
 */
export function modelStepLine(step: ModelStep, context: Record<string, unknown> = {}): Record<string, unknown> {
  const line: Record<string, unknown> = {
    msg: `model step ${step.toolStep} of ${step.modelName}: ${step.outcome} in ${step.latencyMs} ms`,
    model_name: step.modelName,
    tool_step: step.toolStep,
    latency_ms: step.latencyMs,
    outcome: step.outcome,
    attempts: step.attempts,
    ...context,
  };
  if (step.traceId) line.trace_id = step.traceId;
  if (step.inputTokens !== undefined) line.input_tokens = step.inputTokens;
  if (step.outputTokens !== undefined) line.output_tokens = step.outputTokens;
  if (step.finishReason !== undefined) line.finish_reason = step.finishReason;
  return line;
}

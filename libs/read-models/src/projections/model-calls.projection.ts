import { rowProjection } from './projection';
import type { Row } from './row-table';

/** rm_model_calls: one row per model call of a turn, with its attempts, usage, cost and latency. */
export const modelCallsProjection = rowProjection({
  name: 'model-calls',
  model: {
    table: 'rm_model_calls',
    key: ['conversation_id', 'turn_no', 'call_no'],
    columns: {
      conversation_id: 'uuid',
      turn_no: 'integer',
      call_no: 'integer',
      model: 'text',
      provider: 'text',
      status: 'text',
      attempts: 'integer',
      finish_reason: 'text',
      response_model: 'text',
      input_tokens: 'integer',
      output_tokens: 'integer',
      usage_estimated: 'boolean',
      cost: 'double precision',
      latency_ms: 'integer',
      error_kind: 'text',
      error_message: 'text',
      started_at: 'timestamptz',
      completed_at: 'timestamptz',
      last_revision: 'bigint',
    },
  },
  keysOf({ event, conversationId }) {
    switch (event.type) {
      case 'ModelCallStarted':
      case 'ModelCallCompleted':
      case 'ModelCallFailed':
      case 'ModelCallRetryScheduled':
        return [{ conversation_id: conversationId, turn_no: event.data.turnNo, call_no: event.data.callNo }];
      default:
        return [];
    }
  },
  evolve(row, { event, at }): Row | null {
    const r: Row = row ?? {
      model: null,
      provider: null,
      status: 'running',
      attempts: 0,
      finish_reason: null,
      response_model: null,
      input_tokens: null,
      output_tokens: null,
      usage_estimated: null,
      cost: null,
      latency_ms: null,
      error_kind: null,
      error_message: null,
      started_at: at,
      completed_at: null,
    };
    const attempts = Math.max(r.attempts as number, (event.data as { attempt: number }).attempt);
    switch (event.type) {
      case 'ModelCallStarted':
        return { ...r, attempts, status: 'running', model: event.data.model, provider: event.data.provider };
      case 'ModelCallCompleted': {
        const d = event.data;
        return {
          ...r,
          attempts,
          status: 'completed',
          finish_reason: d.finishReason,
          response_model: d.responseModel,
          input_tokens: d.inputTokens,
          output_tokens: d.outputTokens,
          usage_estimated: d.usageEstimated,
          cost: d.cost,
          latency_ms: d.latencyMs,
          completed_at: at,
        };
      }
      case 'ModelCallFailed':
        return {
          ...r,
          attempts,
          status: 'failed',
          error_kind: event.data.kind,
          error_message: event.data.message,
          completed_at: at,
        };
      case 'ModelCallRetryScheduled':
        return { ...r, attempts, status: 'retrying', completed_at: null };
      default:
        return null;
    }
  },
});

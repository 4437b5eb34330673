import { type ResumableStatus, type Status, statusAfter } from '@parley/domain';
import { roundCost } from '@parley/core';
import { rowProjection } from './projection';
import type { Row } from './row-table';

/** rm_conversations: one row per conversation with the seed's LlmConversation fields. */
export const conversationsProjection = rowProjection({
  name: 'conversations',
  model: {
    table: 'rm_conversations',
    key: ['conversation_id'],
    columns: {
      conversation_id: 'uuid',
      owner: 'text',
      status: 'text',
      paused_from: 'text',
      agent_code: 'text',
      action_code: 'text',
      model_code: 'text',
      model_name: 'text',
      provider_code: 'text',
      finish_reason: 'text',
      response_model: 'text',
      input_tokens: 'bigint',
      output_tokens: 'bigint',
      estimated_cost: 'double precision',
      error_code: 'text',
      error_detail: 'text',
      turn_no: 'integer',
      metadata: 'jsonb',
      output: 'jsonb',
      created_at: 'timestamptz',
      updated_at: 'timestamptz',
      last_revision: 'bigint',
      last_position: 'text',
    },
  },
  keysOf: (e) => [{ conversation_id: e.conversationId }],
  evolve(row, { event, at, position }): Row | null {
    if (event.type === 'ConversationStarted') {
      const { owner, agentCode, actionCode, metadata, snapshot } = event.data;
      return {
        owner,
        status: 'NS',
        paused_from: null,
        agent_code: agentCode,
        action_code: actionCode,
        model_code: snapshot.model.code,
        model_name: snapshot.model.name,
        provider_code: snapshot.model.providerCode,
        finish_reason: null,
        response_model: null,
        input_tokens: 0,
        output_tokens: 0,
        estimated_cost: 0,
        error_code: null,
        error_detail: null,
        turn_no: 0,
        metadata,
        output: null,
        created_at: at,
        updated_at: at,
        last_position: position,
      };
    }
    if (!row) return null;
    const { status, pausedFrom } = statusAfter(
      { status: row.status as Status, pausedFrom: row.paused_from as ResumableStatus | null },
      event,
    );
    const r: Row = { ...row, status, paused_from: pausedFrom, updated_at: at, last_position: position };
    switch (event.type) {
      case 'TurnStarted':
        return { ...r, error_code: null, error_detail: null, output: null, turn_no: event.data.turnNo };
      case 'ModelCallCompleted': {
        const d = event.data;
        return {
          ...r,
          input_tokens: (row.input_tokens as number) + d.inputTokens,
          output_tokens: (row.output_tokens as number) + d.outputTokens,
          estimated_cost: roundCost((row.estimated_cost as number) + d.cost),
          response_model: d.responseModel ?? row.response_model,
        };
      }
      case 'MemorySummarized': {
        // The summarisation call is a model call of the conversation: its usage counts the same.
        const d = event.data;
        return {
          ...r,
          input_tokens: (row.input_tokens as number) + d.inputTokens,
          output_tokens: (row.output_tokens as number) + d.outputTokens,
          estimated_cost: roundCost((row.estimated_cost as number) + d.cost),
        };
      }
      case 'ConversationCompleted':
        return {
          ...r,
          finish_reason: event.data.finishReason,
          response_model: event.data.responseModel ?? row.response_model,
          // Structured output: the last turn's parsed reply (jsonb null when the action has no schema).
          output: event.data.output ?? null,
        };
      case 'ConversationFailed':
        return { ...r, error_code: event.data.code, error_detail: event.data.message };
      default:
        return r;
    }
  },
});

import { rowProjection } from './projection';
import type { Row } from './row-table';

const fresh = (turnNo: number, name: string, args: string | null, at: string): Row => ({
  turn_no: turnNo,
  name,
  arguments: args,
  kind: null,
  status: 'requested',
  approval: null,
  result: null,
  error_code: null,
  error_message: null,
  duration_ms: null,
  requested_at: at,
  completed_at: null,
});

/** rm_tool_calls: every tool call the model asked for, with its approval, outcome and duration. */
export const toolCallsProjection = rowProjection({
  name: 'tool-calls',
  model: {
    table: 'rm_tool_calls',
    key: ['conversation_id', 'tool_call_id'],
    columns: {
      conversation_id: 'uuid',
      tool_call_id: 'text',
      turn_no: 'integer',
      name: 'text',
      arguments: 'text',
      kind: 'text',
      status: 'text',
      approval: 'text',
      result: 'text',
      error_code: 'text',
      error_message: 'text',
      duration_ms: 'integer',
      requested_at: 'timestamptz',
      completed_at: 'timestamptz',
      last_revision: 'bigint',
    },
  },
  keysOf({ event, conversationId }) {
    const key = (id: string) => ({ conversation_id: conversationId, tool_call_id: id });
    if (event.type === 'MessageRecorded') return (event.data.toolCalls ?? []).map((t) => key(t.id));
    return 'toolCallId' in event.data && event.data.toolCallId ? [key(event.data.toolCallId)] : [];
  },
  evolve(row, { event, at }, key): Row | null {
    const d = event.data as { turnNo?: number; name?: string; arguments?: string };
    const r = row ?? fresh(d.turnNo ?? 0, d.name ?? 'AskUserQuestion', d.arguments ?? null, at);
    switch (event.type) {
      case 'MessageRecorded': {
        const call = event.data.toolCalls?.find((t) => t.id === key.tool_call_id);
        return call ? fresh(event.data.turnNo, call.name, call.arguments, at) : null;
      }
      case 'ToolCallStarted':
        return { ...r, status: 'started', kind: event.data.kind, name: event.data.name };
      case 'ToolCallApprovalRequested':
        return { ...r, status: 'awaiting_approval', approval: 'pending' };
      case 'ToolCallApproved':
        return { ...r, status: 'approved', approval: 'approved' };
      case 'ToolCallRejected':
        return { ...r, status: 'rejected', approval: 'rejected', error_message: event.data.reason, completed_at: at };
      case 'ToolCallCompleted':
        return {
          ...r,
          status: 'completed',
          result: event.data.output,
          duration_ms: event.data.durationMs,
          completed_at: at,
        };
      case 'ToolCallFailed':
        return {
          ...r,
          status: 'failed',
          error_code: event.data.code,
          error_message: event.data.message,
          duration_ms: event.data.durationMs,
          completed_at: at,
        };
      case 'QuestionAsked':
        return { ...r, status: 'asked', kind: 'ask_user_question' };
      case 'RemoteToolInvoked':
        return { ...r, status: 'invoked', kind: 'remote', name: event.data.name };
      case 'AnswersSubmitted':
        return { ...r, status: 'answered', result: JSON.stringify({ answers: event.data.answers }), completed_at: at };
      default:
        return null;
    }
  },
});

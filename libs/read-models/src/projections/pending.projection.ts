import { rowProjection } from './projection';
import type { Row } from './row-table';

interface PendingApproval {
  toolCallId: string;
  name: string;
  arguments: string;
  requestedAt: string;
}

/**
 * rm_pending: per conversation, the question the model is waiting on (AskUserQuestion) and the
 * tool calls waiting for approval. Both clear when the turn moves on or the conversation ends.
 */
export const pendingProjection = rowProjection({
  name: 'pending',
  model: {
    table: 'rm_pending',
    key: ['conversation_id'],
    columns: {
      conversation_id: 'uuid',
      owner: 'text',
      question: 'jsonb',
      approvals: 'jsonb',
      updated_at: 'timestamptz',
      last_revision: 'bigint',
    },
  },
  keysOf: (e) => [{ conversation_id: e.conversationId }],
  evolve(row, { event, at }): Row | null {
    if (event.type === 'ConversationStarted')
      return { owner: event.data.owner, question: null, approvals: [], updated_at: at };
    if (!row) return null;
    const approvals = row.approvals as PendingApproval[];
    switch (event.type) {
      case 'QuestionAsked': {
        const { toolCallId, sequence, questions, expiresAt } = event.data;
        return { ...row, question: { toolCallId, sequence, questions, expiresAt, askedAt: at }, updated_at: at };
      }
      case 'AnswersSubmitted':
      case 'TurnResumed':
        return row.question === null ? row : { ...row, question: null, updated_at: at };
      case 'ToolCallApprovalRequested': {
        const { toolCallId, name, arguments: args } = event.data;
        return {
          ...row,
          approvals: [...approvals, { toolCallId, name, arguments: args, requestedAt: at }],
          updated_at: at,
        };
      }
      case 'ToolCallApproved':
      case 'ToolCallRejected': {
        const id = event.data.toolCallId;
        return { ...row, approvals: approvals.filter((a) => a.toolCallId !== id), updated_at: at };
      }
      case 'TurnStarted':
      case 'ConversationCompleted':
      case 'ConversationFailed':
      case 'ConversationTerminated':
      case 'ConversationKilled':
        return row.question === null && approvals.length === 0
          ? row
          : { ...row, question: null, approvals: [], updated_at: at };
      default:
        return row;
    }
  },
});

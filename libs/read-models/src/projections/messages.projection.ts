import { transcriptEntryOf } from '@parley/domain';
import { rowProjection } from './projection';

/**
 * rm_messages: the transcript, one row per messageSequence. The entry comes from the domain's
 * own transcriptEntryOf, so the read model and the decider can never disagree.
 */
export const messagesProjection = rowProjection({
  name: 'messages',
  model: {
    table: 'rm_messages',
    key: ['conversation_id', 'sequence'],
    columns: {
      conversation_id: 'uuid',
      sequence: 'integer',
      role: 'text',
      content: 'text',
      token_count: 'integer',
      tool_call_id: 'text',
      tool_calls: 'jsonb',
      rag_sources: 'jsonb',
      output: 'jsonb',
      turn_no: 'integer',
      created_at: 'timestamptz',
      last_revision: 'bigint',
    },
  },
  keysOf(e) {
    // Structured output: a valid check sets the checked answer's output.
    if (e.event.type === 'OutputValidated' && e.event.data.valid)
      return [{ conversation_id: e.conversationId, sequence: e.event.data.sequence }];
    const entry = transcriptEntryOf(e.event);
    return entry ? [{ conversation_id: e.conversationId, sequence: entry.sequence }] : [];
  },
  evolve(row, { event, at }) {
    if (event.type === 'OutputValidated' && event.data.valid) return row ? { ...row, output: event.data.output } : null;
    const entry = transcriptEntryOf(event);
    if (!entry) return null;
    return {
      role: entry.role,
      content: entry.content,
      token_count: event.type === 'MessageRecorded' ? event.data.tokenCount : null,
      tool_call_id: entry.toolCallId ?? null,
      tool_calls: entry.toolCalls ?? null,
      rag_sources: entry.ragSources ?? null,
      output: null,
      turn_no: entry.turnNo,
      created_at: at,
    };
  },
});

/** rm_attachments: the attachments of user messages. */
export const attachmentsProjection = rowProjection({
  name: 'attachments',
  model: {
    table: 'rm_attachments',
    key: ['conversation_id', 'message_sequence', 'attachment_sequence'],
    columns: {
      conversation_id: 'uuid',
      message_sequence: 'integer',
      attachment_sequence: 'integer',
      media_type: 'text',
      url: 'text',
      created_at: 'timestamptz',
      last_revision: 'bigint',
    },
  },
  keysOf: (e) =>
    e.event.type === 'AttachmentRecorded'
      ? [
          {
            conversation_id: e.conversationId,
            message_sequence: e.event.data.messageSequence,
            attachment_sequence: e.event.data.attachmentSequence,
          },
        ]
      : [],
  evolve: (_row, { event, at }) =>
    event.type === 'AttachmentRecorded'
      ? { media_type: event.data.mediaType, url: event.data.url, created_at: at }
      : null,
});

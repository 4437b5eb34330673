import type { ProjectedEvent } from './projected-event';
import type { Projection } from './projection';
import { keyOf, type Row, type RowModel } from './row-table';

/** What the usage totals need to know of each conversation, and how far it has been counted. */
const contexts: RowModel = {
  table: 'rm_usage_conversations',
  key: ['conversation_id'],
  columns: {
    conversation_id: 'uuid',
    subject: 'text',
    agent_code: 'text',
    action_code: 'text',
    model_code: 'text',
    last_revision: 'bigint',
  },
};

/** Running totals per (day, subject, agent, action, model); only ever added to. */
const daily: RowModel = {
  table: 'rm_usage_daily',
  key: ['day', 'subject', 'agent_code', 'action_code', 'model_code'],
  columns: {
    day: 'date',
    subject: 'text',
    agent_code: 'text',
    action_code: 'text',
    model_code: 'text',
    conversations: 'bigint',
    model_calls: 'bigint',
    input_tokens: 'bigint',
    output_tokens: 'bigint',
    estimated_cost: 'numeric',
    turns: 'bigint',
    errors: 'bigint',
    embedding_tokens: 'bigint',
    embedding_cost: 'numeric',
  },
  merge: 'add',
};

const ZERO = {
  conversations: 0,
  model_calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  estimated_cost: 0,
  turns: 0,
  errors: 0,
  embedding_tokens: 0,
  embedding_cost: 0,
};

/** The embedding calls an event records: retrieval's per collection, a remember's or a recall's one. */
function embeddingsOf(event: ProjectedEvent['event']): { model: string; tokens: number; cost: number }[] {
  if (event.type === 'ContextRetrieved')
    return event.data.searches.flatMap((s) =>
      s.model !== null && (s.tokens > 0 || s.cost > 0) ? [{ model: s.model, tokens: s.tokens, cost: s.cost }] : [],
    );
  if ((event.type === 'MemoryRemembered' || event.type === 'MemoriesRecalled') && event.data.embedding)
    return [event.data.embedding];
  return [];
}

/**
 * rm_usage_daily: conversations, model calls, tokens, cost, turns and errors per (day, subject,
 * agent, action, model); the subject is the one that started the conversation (its owner).
 * Embedding calls (retrieval's ContextRetrieved searches, MemoryRemembered, MemoriesRecalled)
 * add their tokens to embedding_tokens and their cost to embedding_cost and estimated_cost, under
 * the embedding model's code: a group by model shows what each model used and cost. A
 * turn ends with ConversationCompleted or ConversationFailed; errors are failed turns
 * (ConversationFailed) and failed model-call attempts (every ModelCallFailed, retried or not).
 * Totals are sums, so they are guarded by the conversation's revision in
 * rm_usage_conversations: an event adds only when it moves its conversation forward. Costs are
 * summed as numeric in PostgreSQL, so totals do not depend on how events were batched.
 */
export const usageProjection: Projection = {
  name: 'usage',
  models: [contexts, daily],
  keysOf: (events) => ({
    [contexts.table]: [...new Set(events.map((e) => e.conversationId))].map((id) => ({ conversation_id: id })),
  }),
  fold(events, stored) {
    const rows = stored(contexts.table);
    const increments: Row[] = [];
    const changed = new Map<string, Row>();
    for (const { conversationId, revision, event, at } of events) {
      const id = keyOf(contexts, { conversation_id: conversationId });
      let row: Row | undefined = rows.get(id);
      if (row && (row.last_revision as number) >= revision) continue;
      if (event.type === 'ConversationStarted') {
        const { owner, agentCode, actionCode, snapshot } = event.data;
        row = {
          conversation_id: conversationId,
          subject: owner,
          agent_code: agentCode,
          action_code: actionCode,
          model_code: snapshot.model.code,
        };
      }
      if (!row) continue;
      const written = { ...row, last_revision: revision };
      rows.set(id, written);
      changed.set(id, written);
      const bucket = {
        day: at.slice(0, 10),
        subject: row.subject,
        agent_code: row.agent_code,
        action_code: row.action_code,
        model_code: row.model_code,
      };
      if (event.type === 'ConversationStarted') increments.push({ ...bucket, ...ZERO, conversations: 1 });
      if (event.type === 'ConversationCompleted') increments.push({ ...bucket, ...ZERO, turns: 1 });
      if (event.type === 'ConversationFailed') increments.push({ ...bucket, ...ZERO, turns: 1, errors: 1 });
      if (event.type === 'ModelCallFailed') increments.push({ ...bucket, ...ZERO, errors: 1 });
      if (event.type === 'ModelCallCompleted' || event.type === 'MemorySummarized')
        increments.push({
          ...bucket,
          ...ZERO,
          model_calls: 1,
          input_tokens: event.data.inputTokens,
          output_tokens: event.data.outputTokens,
          estimated_cost: event.data.cost,
        });
      for (const used of embeddingsOf(event))
        increments.push({
          ...bucket,
          ...ZERO,
          model_code: used.model,
          embedding_tokens: used.tokens,
          embedding_cost: used.cost,
          estimated_cost: used.cost,
        });
    }
    return { [contexts.table]: [...changed.values()], [daily.table]: increments };
  },
};

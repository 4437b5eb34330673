import type { Projection } from './projection';
import { keyOf, RowTable, type Row, type RowModel } from './row-table';

/** What the usage totals need to know of each conversation, and how far it has been counted. */
const contexts: RowModel = {
  table: 'rm_usage_conversations',
  key: ['conversation_id'],
  columns: {
    conversation_id: 'uuid',
    agent_code: 'text',
    action_code: 'text',
    model_code: 'text',
    last_revision: 'bigint',
  },
};

interface Increment {
  day: string;
  agent_code: string;
  action_code: string;
  model_code: string;
  conversations: number;
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  estimated_cost: number;
}

/**
 * rm_usage_daily: conversations, model calls, tokens and cost per (day, agent, action, model).
 * Totals are sums, so they are guarded by the conversation's revision in
 * rm_usage_conversations: an event adds only when it moves its conversation forward. Costs are
 * summed as numeric in PostgreSQL, so totals do not depend on how events were batched.
 */
export const usageProjection: Projection = {
  name: 'usage',
  tables: ['rm_usage_conversations', 'rm_usage_daily'],
  async apply(events, tx, tables) {
    const table = new RowTable(contexts);
    const rows = await table.load(
      tx,
      tables(contexts.table),
      [...new Set(events.map((e) => e.conversationId))].map((id) => ({ conversation_id: id })),
    );
    const increments: Increment[] = [];
    const changed = new Set<string>();
    for (const { conversationId, revision, event, at } of events) {
      const id = keyOf(contexts, { conversation_id: conversationId });
      let row: Row | undefined = rows.get(id);
      if (row && (row.last_revision as number) >= revision) continue;
      if (event.type === 'ConversationStarted') {
        const { agentCode, actionCode, snapshot } = event.data;
        row = {
          conversation_id: conversationId,
          agent_code: agentCode,
          action_code: actionCode,
          model_code: snapshot.model.code,
        };
      }
      if (!row) continue;
      rows.set(id, { ...row, last_revision: revision });
      changed.add(id);
      const bucket = {
        day: at.slice(0, 10),
        agent_code: row.agent_code as string,
        action_code: row.action_code as string,
        model_code: row.model_code as string,
      };
      if (event.type === 'ConversationStarted')
        increments.push({
          ...bucket,
          conversations: 1,
          model_calls: 0,
          input_tokens: 0,
          output_tokens: 0,
          estimated_cost: 0,
        });
      if (event.type === 'ModelCallCompleted')
        increments.push({
          ...bucket,
          conversations: 0,
          model_calls: 1,
          input_tokens: event.data.inputTokens,
          output_tokens: event.data.outputTokens,
          estimated_cost: event.data.cost,
        });
    }
    await table.save(
      tx,
      tables(contexts.table),
      [...changed].map((id) => rows.get(id) as Row),
    );
    if (increments.length === 0) return;
    const daily = tables('rm_usage_daily');
    await tx.query(
      `insert into ${daily} as t (day, agent_code, action_code, model_code, conversations, model_calls,
                                  input_tokens, output_tokens, estimated_cost)
       select day, agent_code, action_code, model_code, sum(conversations), sum(model_calls),
              sum(input_tokens), sum(output_tokens), sum(estimated_cost)
       from jsonb_to_recordset($1::jsonb) as r(day date, agent_code text, action_code text, model_code text,
            conversations bigint, model_calls bigint, input_tokens bigint, output_tokens bigint, estimated_cost numeric)
       group by day, agent_code, action_code, model_code
       on conflict (day, agent_code, action_code, model_code) do update set
         conversations = t.conversations + excluded.conversations,
         model_calls = t.model_calls + excluded.model_calls,
         input_tokens = t.input_tokens + excluded.input_tokens,
         output_tokens = t.output_tokens + excluded.output_tokens,
         estimated_cost = t.estimated_cost + excluded.estimated_cost`,
      [JSON.stringify(increments)],
    );
  },
};

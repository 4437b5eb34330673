import { ERASED } from '@parley/event-store';
import type { ClientBase, Pool } from 'pg';
import type { ProjectedEvent } from './projected-event';
import type { TableNames } from './projection';

const MARK = `'${ERASED}'`;
const MARK_JSON = `'"${ERASED}"'::jsonb`;
const mark = (column: string) => `${column} = case when ${column} is null then null else ${MARK} end`;
const markJson = (column: string) => `${column} = case when ${column} is null then null else ${MARK_JSON} end`;

/** Each read-model table's content columns, and how an erasure overwrites them. */
const PURGES: Record<string, string> = {
  rm_messages: `${mark('content')}, ${markJson('output')},
    tool_calls = case when tool_calls is null then null else (
      select jsonb_agg(case when t ? 'arguments' then t || jsonb_build_object('arguments', ${MARK}) else t end)
        from jsonb_array_elements(tool_calls) t) end`,
  rm_attachments: mark('url'),
  rm_tool_calls: `${mark('arguments')}, ${mark('result')}, ${mark('error_message')}`,
  rm_pending: `question = null, approvals = '[]'::jsonb`,
  rm_conversations: markJson('output'),
};

/** The conversations a batch erases. */
export const erasedIn = (events: readonly ProjectedEvent[]): string[] => [
  ...new Set(events.filter((e) => e.event.type === 'ConversationErased').map((e) => e.conversationId)),
];

/**
 * Overwrites the content the read models keep of erased conversations with `[erased]`
 * (structure, timing, tokens and cost stay). The content was sealed with the destroyed key
 * already; this removes even the ciphertext. `tables`: only these (a rebuild of some).
 */
export async function purgeErasedContent(
  db: ClientBase | Pool,
  conversationIds: readonly string[],
  names: TableNames = (t) => t,
  tables: ReadonlySet<string> = new Set(Object.keys(PURGES)),
): Promise<void> {
  if (conversationIds.length === 0) return;
  for (const [table, set] of Object.entries(PURGES)) {
    if (!tables.has(table)) continue;
    await db.query(`update ${names(table)} set ${set} where conversation_id = any($1::uuid[])`, [conversationIds]);
  }
}

import type { Pool } from 'pg';

/**
 * The conversations whose turn is running, waiting for a human, or paused (a question may still
 * be pending), as the read models last saw them: what the turn dispatcher looks at when the
 * queue has lost its jobs.
 */
export async function openConversationIds(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ conversation_id: string }>(
    `select conversation_id from rm_conversations where status in ('RU', 'WA', 'PA')`,
  );
  return rows.map((row) => row.conversation_id);
}

import { assertCanRead, canReadConversation, ownerFilter, type Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import { openContent, type ConversationKeys } from '@parley/event-store';
import type { Pool } from 'pg';
import { decodeCursor, encodeCursor } from './cursor';
import type { ProjectionPositions } from './projection-positions';
import type { ByConversation, CountConversationsQuery, ListConversationsQuery } from './query-schemas';
import { conversationOf, messageOf, modelCallOf, toolCallOf, type ConversationView } from './row-mappers';

type Row = Record<string, unknown>;

/**
 * The conversation queries over the read models. A client sees only the conversations it
 * owns; someone else's reads exactly like an unknown id (null / NOT_FOUND).
 */
export class ConversationQueries {
  constructor(
    private readonly pool: Pool,
    private readonly positions: ProjectionPositions,
    /** Opens the content the projections keep sealed; without it rows are returned as stored. */
    private readonly keys: ConversationKeys | null = null,
  ) {}

  /** findConversation: the conversation, or null (seed 000). */
  async findConversation(principal: Principal, q: ByConversation): Promise<ConversationView | null> {
    await this.positions.waitFor(q.minPosition);
    const row = await this.row(q.conversationId);
    return row && this.readable(principal, row) ? conversationOf(await this.open(q.conversationId, row)) : null;
  }

  /** getConversationMessages: the transcript in sequence, attachments included. */
  async getConversationMessages(principal: Principal, q: ByConversation) {
    await this.positions.waitFor(q.minPosition);
    await this.require(principal, q.conversationId);
    const [messages, attachments] = await Promise.all([
      this.pool.query<Row>('select * from rm_messages where conversation_id = $1 order by sequence', [
        q.conversationId,
      ]),
      this.pool.query<Row>(
        'select * from rm_attachments where conversation_id = $1 order by message_sequence, attachment_sequence',
        [q.conversationId],
      ),
    ]);
    const [rows, files] = await this.open(q.conversationId, [messages.rows, attachments.rows]);
    return rows.map((m) =>
      messageOf(
        m,
        files.filter((a) => a.message_sequence === m.sequence),
      ),
    );
  }

  /** getPendingQuestions: the question a WAITING conversation waits on, or null (seed 000). */
  async getPendingQuestions(principal: Principal, q: ByConversation) {
    await this.positions.waitFor(q.minPosition);
    const row = await this.row(q.conversationId);
    if (!row || !this.readable(principal, row) || row.status !== 'WA') return null;
    const { rows } = await this.pool.query<{ question: Record<string, unknown> | null }>(
      'select question from rm_pending where conversation_id = $1',
      [q.conversationId],
    );
    const question = await this.open(q.conversationId, rows[0]?.question);
    return question ? { conversationUuid: q.conversationId, ...question } : null;
  }

  /** The tool calls waiting for an administrator's or the owner's approval. */
  async getPendingApprovals(principal: Principal, q: ByConversation) {
    await this.positions.waitFor(q.minPosition);
    await this.require(principal, q.conversationId);
    const { rows } = await this.pool.query<{ approvals: unknown[] }>(
      'select approvals from rm_pending where conversation_id = $1',
      [q.conversationId],
    );
    return this.open(q.conversationId, rows[0]?.approvals ?? []);
  }

  async getToolCalls(principal: Principal, q: ByConversation) {
    await this.positions.waitFor(q.minPosition);
    await this.require(principal, q.conversationId);
    const { rows } = await this.pool.query<Row>(
      'select * from rm_tool_calls where conversation_id = $1 order by requested_at, tool_call_id',
      [q.conversationId],
    );
    return (await this.open(q.conversationId, rows)).map(toolCallOf);
  }

  async getModelCalls(principal: Principal, q: ByConversation) {
    await this.positions.waitFor(q.minPosition);
    await this.require(principal, q.conversationId);
    const { rows } = await this.pool.query<Row>(
      'select * from rm_model_calls where conversation_id = $1 order by turn_no, call_no',
      [q.conversationId],
    );
    return rows.map(modelCallOf);
  }

  /** Newest first, filtered, paged by an opaque cursor. */
  async listConversations(principal: Principal, q: ListConversationsQuery) {
    await this.positions.waitFor(q.minPosition);
    const { where, params, add } = filtersOf(principal, q);
    if (q.status) add('status = ?', q.status);
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      params.push(c.createdAt, c.id);
      where.push(`(created_at, conversation_id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(q.limit + 1);
    const { rows } = await this.pool.query<Row>(
      `select * from rm_conversations ${where.length ? `where ${where.join(' and ')}` : ''}
       order by created_at desc, conversation_id desc limit $${params.length}`,
      params,
    );
    const items = (await this.openRows(rows.slice(0, q.limit))).map(conversationOf);
    const last = items.at(-1);
    const nextCursor =
      rows.length > q.limit && last
        ? encodeCursor({ createdAt: last.createdAt as string, id: last.conversationUuid })
        : null;
    return { items, nextCursor };
  }

  /** How many conversations of each status the same filters (but status) find: `{total, byStatus}`. */
  async countConversations(principal: Principal, q: CountConversationsQuery) {
    await this.positions.waitFor(q.minPosition);
    const { where, params } = filtersOf(principal, q);
    const { rows } = await this.pool.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from rm_conversations ${where.length ? `where ${where.join(' and ')}` : ''}
       group by status`,
      params,
    );
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    return { total: rows.reduce((sum, r) => sum + r.n, 0), byStatus };
  }

  /** The owner of a conversation the caller may read; NOT_FOUND otherwise. */
  async require(principal: Principal, conversationId: string): Promise<Row> {
    const row = await this.row(conversationId);
    if (!row) throw DomainError.notFound('Conversation', conversationId);
    assertCanRead(principal, row.owner as string, { type: 'Conversation', id: conversationId });
    return row;
  }

  /** The rule `require` (assertCanRead) applies too: a client reads only its own, auditors and admins all. */
  private readable(principal: Principal, row: Row): boolean {
    return canReadConversation(principal, row.owner as string);
  }

  /** The conversation's sealed content opened: plaintext, or `[erased]` once it is erased. */
  private async open<T>(conversationId: string, value: T): Promise<T> {
    if (!this.keys) return value;
    let state = await this.keys.stateOf(conversationId);
    // Cached as keyless, but sealed content says another process gave it a key since.
    if (state.kind === 'none' && JSON.stringify(value ?? null).includes('"pc1')) {
      this.keys.forget(conversationId);
      state = await this.keys.stateOf(conversationId);
    }
    return openContent(conversationId, value, state) as T;
  }

  private async openRows(rows: Row[]): Promise<Row[]> {
    if (!this.keys || rows.length === 0) return rows;
    const ids = rows.map((r) => r.conversation_id as string);
    let states = await this.keys.statesOf(ids);
    const stale = ids.filter((id, i) => states.get(id)?.kind === 'none' && JSON.stringify(rows[i]).includes('"pc1'));
    if (stale.length > 0) {
      for (const id of stale) this.keys.forget(id);
      states = await this.keys.statesOf(ids);
    }
    return rows.map((r, i) => openContent(ids[i], r, states.get(ids[i]) ?? { kind: 'none' }) as Row);
  }

  private async row(conversationId: string): Promise<Row | null> {
    const { rows } = await this.pool.query<Row>('select * from rm_conversations where conversation_id = $1', [
      conversationId,
    ]);
    return rows[0] ?? null;
  }
}

/** The WHERE clauses the list and its counts share; `add` appends one more with its `?` bound. */
function filtersOf(principal: Principal, q: CountConversationsQuery) {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  const owner = ownerFilter(principal);
  if (owner !== null) add('owner = ?', owner);
  if (q.subject) add('owner = ?', q.subject);
  if (q.agentCode) add('agent_code = ?', q.agentCode);
  if (q.actionCode) add('action_code = ?', q.actionCode);
  if (q.from) add('created_at >= ?', q.from);
  if (q.to) add('created_at < ?', q.to);
  if (q.text)
    add(
      `(conversation_id::text ilike ? or agent_code ilike ? or action_code ilike ? or owner ilike ? or metadata::text ilike ?)`,
      `%${q.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
    );
  return { where, params, add };
}

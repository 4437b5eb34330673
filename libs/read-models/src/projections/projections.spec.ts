import { Logger } from '@nestjs/common';
import { DEV_PRINCIPAL } from '@parley/auth';
import { toEnvelope } from '@parley/conversation';
import { fold, streamIdOf, type ExistingConversation } from '@parley/domain';
import { randomUUID } from 'node:crypto';
import { comparePositions, PostgresEventStore, type SubscriptionRunner } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { conversationScript, createTestDatabase, snapshotFixture, toAppend, type TestDatabase } from '@parley/testing';
import { Client, type Pool } from 'pg';
import { applyProjections } from './apply-projections';
import { messagesProjection } from './messages.projection';
import { projectedEvents } from './projected-event';
import { runProjections } from './projection-runner';
import { AuditQueries } from '../queries/audit-queries';
import { PROJECTIONS } from './projections';
import { rebuildProjections } from './rebuild';

const TABLES = [
  'rm_conversations',
  'rm_messages',
  'rm_attachments',
  'rm_tool_calls',
  'rm_model_calls',
  'rm_pending',
  'rm_usage_conversations',
  'rm_usage_daily',
];

describe('read-model projections', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  /** The projector's own pool. */
  let projectorPool: Pool;
  let runner: SubscriptionRunner;
  const ids = [randomUUID(), randomUUID()];
  const start = () => (runner = runProjections(PROJECTIONS, { pool: projectorPool, feed: store, pollMs: 50 }));
  const appendConversation = async () => {
    const id = randomUUID();
    await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture() })));
    return id;
  };
  /** The feed holds events back while older transactions anywhere on the server are open. */
  const feedShows = async (position: string) => {
    for (let tries = 0; tries < 500; tries++) {
      const { scannedTo } = await store.readPage(null, undefined, 10_000);
      if (scannedTo !== null && comparePositions(scannedTo, position) >= 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`the feed did not reach ${position}`);
  };
  const statusOf = async (id: string) =>
    (await pool.query('select status from rm_conversations where conversation_id = $1', [id])).rows;
  const messageCount = async () => (await pool.query('select count(*)::int as n from rm_messages')).rows[0].n;

  const dump = async () => {
    const out: Record<string, unknown[]> = {};
    for (const t of TABLES) out[t] = (await pool.query(`select * from ${t} order by 1, 2, 3`)).rows;
    return out;
  };
  const caughtUp = async () => {
    const head = (await store.headPosition()) as string;
    expect(await runner.waitForPosition(head, 10_000)).toBe(true);
  };

  beforeAll(async () => {
    db = await createTestDatabase('read_models');
    pool = createPgPool({ url: db.url, max: 12 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
    projectorPool = createPgPool({ url: db.url, max: 4 });
    for (const id of ids)
      await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture() })));
    start();
    await caughtUp();
  });
  afterAll(async () => {
    await runner.stop();
    await store.close();
    await projectorPool.end();
    await pool.end();
    await db.drop();
  });

  it('match the folded events field by field after a full conversation', async () => {
    const recorded = await store.readStream(streamIdOf(ids[0]));
    const state = fold(recorded.flatMap((r) => toEnvelope(r) ?? []));
    const c = state as ExistingConversation;
    const { rows } = await pool.query('select * from rm_conversations where conversation_id = $1', [ids[0]]);
    expect(rows[0]).toMatchObject({
      owner: c.owner,
      status: c.status,
      agent_code: c.agentCode,
      action_code: c.actionCode,
      model_code: 'SIM-CHAT',
      finish_reason: c.finishReason,
      response_model: c.responseModel,
      input_tokens: BigInt(c.usage.inputTokens),
      output_tokens: BigInt(c.usage.outputTokens),
      estimated_cost: c.usage.estimatedCost,
      error_detail: null,
      turn_no: 2,
      last_revision: recorded.at(-1)?.revision,
      last_position: recorded.at(-1)?.position,
      updated_at: new Date(c.updatedAt),
    });
    const messages = await pool.query(
      'select sequence, role, content, tool_call_id, tool_calls, turn_no from rm_messages where conversation_id = $1 order by sequence',
      [ids[0]],
    );
    expect(messages.rows).toEqual(
      c.transcript.map((m) => ({
        sequence: m.sequence,
        role: m.role,
        content: m.content,
        tool_call_id: m.toolCallId ?? null,
        tool_calls: m.toolCalls ?? null,
        turn_no: m.turnNo,
      })),
    );
    const attachments = await pool.query('select media_type, url from rm_attachments where conversation_id = $1', [
      ids[0],
    ]);
    expect(attachments.rows).toEqual([{ media_type: 'image/png', url: 'https://files.example/1.png' }]);
    const tools = await pool.query(
      'select tool_call_id, status, approval, result, error_code, duration_ms from rm_tool_calls where conversation_id = $1 order by requested_at',
      [ids[0]],
    );
    expect(tools.rows).toEqual([
      {
        tool_call_id: 'call-1',
        status: 'completed',
        approval: null,
        result: '{"status":"shipped"}',
        error_code: null,
        duration_ms: 17,
      },
      {
        tool_call_id: 'ask-1',
        status: 'answered',
        approval: null,
        result: '{"answers":{"why":"too late"}}',
        error_code: null,
        duration_ms: null,
      },
      {
        tool_call_id: 'call-2',
        status: 'failed',
        approval: 'approved',
        result: null,
        error_code: 'TOOL_ERROR',
        duration_ms: 40,
      },
    ]);
    const calls = await pool.query(
      'select turn_no, call_no, status, attempts, input_tokens from rm_model_calls where conversation_id = $1 order by 1, 2',
      [ids[0]],
    );
    expect(calls.rows).toHaveLength(5);
    expect(calls.rows[1]).toEqual({ turn_no: 1, call_no: 2, status: 'completed', attempts: 2, input_tokens: 122 });
    const pending = await pool.query('select question, approvals from rm_pending where conversation_id = $1', [ids[0]]);
    expect(pending.rows).toEqual([{ question: null, approvals: [] }]);
    const usage = await pool.query('select * from rm_usage_daily');
    expect(usage.rows).toEqual([
      {
        day: expect.any(Date),
        subject: 'client-a',
        agent_code: 'HELPDESK',
        action_code: 'ANSWER',
        model_code: 'SIM-CHAT',
        conversations: 2n,
        model_calls: 10n,
        input_tokens: BigInt(2 * c.usage.inputTokens),
        output_tokens: BigInt(2 * c.usage.outputTokens),
        estimated_cost: '0.001230',
        // Two turns each; one failed model-call attempt each (retried).
        turns: 4n,
        errors: 2n,
        embedding_tokens: 0n,
        embedding_cost: '0',
      },
    ]);
  });

  it('changes nothing when the same events are delivered again', async () => {
    const before = await dump();
    const again = projectedEvents(await store.readAll());
    const tx = await pool.connect();
    try {
      await tx.query('begin');
      await applyProjections(tx, PROJECTIONS, [...again.slice(5), ...again], (t) => t);
      await tx.query('commit');
    } finally {
      tx.release();
    }
    expect(await dump()).toEqual(before);
  });

  it('rebuilds identical tables from position zero while the projectors run, which then carry on', async () => {
    const before = await dump();
    const result = await rebuildProjections(pool, store, PROJECTIONS, 7);
    expect(result.events).toBe(2 * conversationScript(ids[0], { snapshot: snapshotFixture() }).length);
    expect(await dump()).toEqual(before);

    const third = await appendConversation();
    await caughtUp();
    expect(await statusOf(third)).toEqual([{ status: 'CO' }]);
    expect(await messageCount()).toBe(33);
  });

  it('rebuilds one read model while the projector runs, leaving every table as it was', async () => {
    const before = await dump();
    await rebuildProjections(pool, store, [messagesProjection], 7);
    expect(await dump()).toEqual(before);

    const next = await appendConversation();
    await caughtUp();
    expect(await statusOf(next)).toEqual([{ status: 'CO' }]);
    expect(await messageCount()).toBe(44);
  });

  it('brings the read models it does not rebuild up to date when the projector is behind', async () => {
    await runner.stop();
    const missed = await appendConversation();
    await feedShows((await store.headPosition()) as string);
    await rebuildProjections(pool, store, [messagesProjection], 7);
    // No projector ran: the rebuild's catch-up wrote the other read models' live tables.
    expect(await statusOf(missed)).toEqual([{ status: 'CO' }]);
    expect(await messageCount()).toBe(55);
    const { rows } = await pool.query("select position from es_checkpoints where subscription_id = 'read-models'");
    expect(rows).toEqual([{ position: await store.headPosition() }]);

    start();
    await caughtUp();
    const after = await dump();
    await rebuildProjections(pool, store, PROJECTIONS, 7);
    expect(await dump()).toEqual(after);
  });

  it('projects a burst of appends in two prepared statements on its own connection: one load, one write of every read model with the checkpoint', async () => {
    await caughtUp();
    const sent: { client: Client; sql: string; name?: string }[] = [];
    const original = Client.prototype.query as (...args: unknown[]) => unknown;
    const query = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
      const sql = args[0];
      sent.push(
        typeof sql === 'string'
          ? { client: this, sql }
          : { client: this, sql: (sql as { text: string }).text, name: (sql as { name?: string }).name },
      );
      return original.apply(this, args) as never;
    });
    let id: string;
    try {
      await appendConversation();
      await caughtUp();
      id = await appendConversation();
      await caughtUp();
    } finally {
      query.mockRestore();
    }
    // The projector's connection is the one that moved the checkpoint.
    const projector = sent.find(({ sql }) => sql.includes('update es_checkpoints set position'))?.client;
    const batches = sent.filter(({ client }) => client === projector);
    const batch = batches.map(({ sql }) => sql);
    expect(batch).toEqual([
      expect.stringMatching(/^select \(select json_agg\(t\) from rm_conversations t/),
      expect.stringMatching(/^with swap as \(update es_checkpoints set position/),
      expect.stringMatching(/^select \(select json_agg\(t\) from rm_conversations t/),
      expect.stringMatching(/^with swap as \(update es_checkpoints set position/),
    ]);
    // Named, so the connection parses and plans each once: the second burst reuses them.
    const names = batches.map(({ name }) => name);
    expect(names[0]).toMatch(/^parley_rm_[0-9a-f]{32}$/);
    expect(names[1]).toMatch(/^parley_rm_[0-9a-f]{32}$/);
    expect(names[0]).not.toBe(names[1]);
    expect(names.slice(2)).toEqual(names.slice(0, 2));
    const [load, write] = batch;
    // Every table whose rows are folded is read; the daily totals are only added to.
    const loaded = TABLES.filter((table) => load.includes(`from ${table} t`));
    expect(loaded).toEqual(TABLES.filter((table) => table !== 'rm_usage_daily'));
    for (const table of TABLES) expect(write).toContain(`insert into ${table} as t `);
    expect(await statusOf(id)).toEqual([{ status: 'CO' }]);
  });

  it('projects a stream holding an event type a newer Parley wrote, skipping it with one warning', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const id = randomUUID();
      const future = (title: string) => ({
        eventId: randomUUID(),
        type: 'ConversationRetitledInFuture',
        schemaVersion: 1,
        data: { title },
        metadata: { occurredAt: '2026-11-20T10:00:00.500Z' },
      });
      const events = toAppend(conversationScript(id, { snapshot: snapshotFixture() }));
      events.splice(1, 0, future('first'));
      events.splice(5, 0, future('second'));
      await store.append(streamIdOf(id), events);
      await caughtUp();

      const { rows } = await pool.query(
        'select status, last_revision, (select count(*)::int from rm_messages m where m.conversation_id = c.conversation_id) as messages from rm_conversations c where conversation_id = $1',
        [id],
      );
      expect(rows).toEqual([{ status: 'CO', last_revision: BigInt(events.length - 1), messages: 11 }]);
      const audited = await new AuditQueries(store).getState(DEV_PRINCIPAL, { conversationId: id });
      expect(audited).toMatchObject({ revision: events.length - 1, state: { status: 'CO' } });
      expect(warn.mock.calls.map(([text]) => text)).toEqual([
        expect.stringMatching(/^Skipping event type ConversationRetitledInFuture: a newer Parley wrote it/),
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});

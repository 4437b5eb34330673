import { loadConfig } from '@parley/config';
import { ConversationRepository, ConversationSignals, type ConversationEvent } from '@parley/conversation';
import { PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, snapshotFixture, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { TurnContext, TurnPreempted } from './turn-context';

const started = (id: string): ConversationEvent[] => [
  {
    type: 'ConversationStarted',
    data: {
      conversationId: id,
      agentCode: 'HELPDESK',
      actionCode: 'CHAT',
      owner: 'client-a',
      metadata: {},
      snapshot: snapshotFixture(),
    },
  },
  { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 } },
  { type: 'TurnStarted', data: { turnNo: 1 } },
];
const call = { turnNo: 1, callNo: 1, attempt: 1 };

describe('TurnContext', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase('turn_context');
    pool = createPgPool({ url: db.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('refuses every append queued behind one that found the stream moved, so nothing lands on the new state', async () => {
    const id = randomUUID();
    const repository = new ConversationRepository(store, new ConversationSignals(), loadConfig({}));
    await repository.append(id, await repository.load(id), started(id), { actor: 'client-a' });
    const ctx = new TurnContext(id, repository, await repository.load(id), `turn:${id}:1`);
    // Another worker finishes the same turn first.
    const other = new TurnContext(id, repository, await repository.load(id), `turn:${id}:1`);
    await other.append([
      { type: 'ModelCallStarted', data: { ...call, model: 'sim-chat', provider: 'SIM' } },
      { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: null } },
    ]);

    const flush = ctx.append([{ type: 'ModelCallStarted', data: { ...call, model: 'sim-chat', provider: 'SIM' } }]);
    const outcome = ctx.append([{ type: 'ChunksReceived', data: { ...call, text: 'late', reasoning: '', count: 1 } }]);

    await expect(flush).rejects.toBeInstanceOf(TurnPreempted);
    await expect(outcome).rejects.toBeInstanceOf(TurnPreempted);
    const types = (await store.readStream(`conversation-${id}`)).map((e) => e.type);
    expect(types).toEqual([
      'ConversationStarted',
      'MessageRecorded',
      'TurnStarted',
      'ModelCallStarted',
      'ConversationCompleted',
    ]);
    expect(ctx.state.status).toBe('CO');
  });

  it('folds staged events into its state at once and stores them, in order, with the next append', async () => {
    const id = randomUUID();
    const repository = new ConversationRepository(store, new ConversationSignals(), loadConfig({}));
    await repository.append(id, await repository.load(id), started(id), { actor: 'client-a' });
    const ctx = new TurnContext(id, repository, await repository.load(id), `turn:${id}:1`);
    const toolCall = { id: 'call-1', name: 'ORDER_STATUS', arguments: '{}' };
    await ctx.append([
      {
        type: 'MessageRecorded',
        data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 1, toolCalls: [toolCall] },
      },
    ]);

    ctx.stage([
      {
        type: 'ToolCallStarted',
        data: { turnNo: 1, toolCallId: 'call-1', name: 'ORDER_STATUS', arguments: '{}', kind: 'in_process' },
      },
      {
        type: 'ToolCallCompleted',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'call-1',
          name: 'ORDER_STATUS',
          output: '{"ok":true}',
          truncated: false,
          durationMs: 3,
        },
      },
    ]);

    expect(ctx.state.turn!.toolCalls).toEqual([expect.objectContaining({ id: 'call-1', status: 'completed' })]);
    expect(ctx.revision).toBe(3n);
    const typesNow = async () => (await store.readStream(`conversation-${id}`)).map((e) => e.type);
    expect(await typesNow()).not.toContain('ToolCallCompleted');
    await ctx.append([{ type: 'ModelCallStarted', data: { ...call, callNo: 2, model: 'sim-chat', provider: 'SIM' } }]);
    expect((await typesNow()).slice(-3)).toEqual(['ToolCallStarted', 'ToolCallCompleted', 'ModelCallStarted']);
    expect(ctx.revision).toBe(6n);
    expect(ctx.state.turn!.toolCalls[0].status).toBe('completed');
  });
});

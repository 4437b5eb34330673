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
});

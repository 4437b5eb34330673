import { loadConfig } from '@parley/config';
import type { ConversationEvent } from '@parley/domain';
import { PostgresEventStore, type EventToAppend } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, snapshotFixture, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { OperationContext } from '../api/operation';
import { ConversationSignals } from '../repository/conversation-signals';
import { ConversationRepository } from '../repository/conversation.repository';
import { CommandRunner } from './command-runner';
import type { TurnScheduler } from './turn-scheduler';

const runningTurn = (id: string): ConversationEvent[] => [
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
const chunks: ConversationEvent = {
  type: 'ChunksReceived',
  data: { turnNo: 1, callNo: 1, attempt: 1, text: 'more', reasoning: '', count: 1 },
};
const admin: OperationContext = { caller: { subject: 'ops', roles: ['admin'] } };

describe('CommandRunner against a turn that keeps appending', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  /** How many more of the command's appends a turn append slips in front of. */
  let interfere = 0;

  beforeAll(async () => {
    db = await createTestDatabase('command_runner');
    pool = createPgPool({ url: db.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const repositoryOf = (on: PostgresEventStore) =>
    new ConversationRepository(on, new ConversationSignals(), loadConfig({}));

  /** A runner whose every append of `type` loses the race to the turn's append, `losses` times over. */
  function racedRunner(type: ConversationEvent['type'], losses: number) {
    const turn = repositoryOf(store);
    const append = store.append.bind(store);
    interfere = losses;
    const racing = Object.create(store) as PostgresEventStore;
    racing.append = async (streamId: string, events: EventToAppend[], options) => {
      if (interfere > 0 && events.some((e) => e.type === type)) {
        interfere--;
        const id = streamId.replace(/^conversation-/, '');
        await turn.append(id, await turn.load(id), [chunks], { actor: 'worker' });
      }
      return append(streamId, events, options);
    };
    // The queue is not what this is about: jobs the command would schedule are dropped.
    const scheduler = { afterAppend: async () => undefined } as unknown as TurnScheduler;
    return { runner: new CommandRunner(repositoryOf(racing), scheduler, new ConversationSignals()), turn };
  }

  it.each([
    ['KillConversation', 'ConversationKilled', 'KI'],
    ['TerminateConversation', 'ConversationTerminated', 'TE'],
  ] as const)('lands %s however many races it loses to the running turn', async (type, event, status) => {
    const id = randomUUID();
    const { runner, turn } = racedRunner(event, 12);
    await turn.append(id, await turn.load(id), runningTurn(id), { actor: 'client-a' });

    const done = await runner.execute(id, admin, { type, reason: 'runaway' }, (meta) => ({
      type,
      data: { reason: 'runaway' },
      meta,
    }));

    expect(interfere).toBe(0);
    expect(done.state.status).toBe(status);
    const types = (await store.readStream(`conversation-${id}`)).map((e) => e.type);
    expect(types.filter((t) => t === 'ChunksReceived')).toHaveLength(12);
    expect(types.at(-1)).toBe(event);
  });

  it('still gives up on other commands after five lost races', async () => {
    const id = randomUUID();
    const { runner, turn } = racedRunner('ConversationPaused', 12);
    await turn.append(id, await turn.load(id), runningTurn(id), { actor: 'client-a' });

    await expect(
      runner.execute(id, admin, { type: 'PauseConversation', reason: null }, (meta) => ({
        type: 'PauseConversation',
        data: { reason: null },
        meta,
      })),
    ).rejects.toMatchObject({ name: 'WrongExpectedVersion' });
  });
});

import { loadConfig } from '@parley/config';
import { ConversationRepository, ConversationSignals } from '@parley/conversation';
import { type ConversationEvent } from '@parley/domain';
import { type EventStore, PostgresEventStore } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, snapshotFixture } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import { TurnContext } from './turn-context';

/**
 * Shared by the turn's database tests: an event store on a database of their own, a started
 * conversation, and a turn running on it. Not a spec, and not exported from the lib.
 */
interface TurnTestStore {
  /** The store itself, so a spec can wrap one of its methods to count the calls. */
  store: PostgresEventStore;
  /** Ends the pool and drops the database. */
  close(): Promise<void>;
}

async function openTurnStore(label: string): Promise<TurnTestStore> {
  const db = await createTestDatabase(label);
  const pool = createPgPool({ url: db.url, max: 4 });
  const store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
  return {
    store,
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
}

/**
 * For a spec file: opens a turn store before its tests and closes it after them; the returned
 * function gives the store once it is open.
 */
export function useTurnStore(label: string): () => PostgresEventStore {
  let opened: TurnTestStore | undefined;
  beforeAll(async () => {
    opened = await openTurnStore(label);
  });
  afterAll(() => opened?.close());
  return () => {
    if (!opened) throw new Error('the turn store opens in beforeAll');
    return opened.store;
  };
}

/** A HELPDESK/CHAT conversation owned by client-a, on the example snapshot. */
export const conversationStarted = (id: string): ConversationEvent => ({
  type: 'ConversationStarted',
  data: {
    conversationId: id,
    agentCode: 'HELPDESK',
    actionCode: 'CHAT',
    owner: 'client-a',
    metadata: {},
    snapshot: snapshotFixture(),
  },
});

/** The started conversation, the user's 'hi' and turn 1 started: the stream a running turn finds. */
export const startedTurn = (id: string): ConversationEvent[] => [
  conversationStarted(id),
  { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 } },
  { type: 'TurnStarted', data: { turnNo: 1 } },
];

/** A repository on `store` with its own signals and the default config. */
export const conversationRepository = (store: EventStore) =>
  new ConversationRepository(store, new ConversationSignals(), loadConfig({}));

/** Stores {@link startedTurn} for a fresh conversation and returns turn 1's context on it. */
export async function startTurn(store: EventStore) {
  const id = randomUUID();
  const repository = conversationRepository(store);
  await repository.append(id, await repository.load(id), startedTurn(id), { actor: 'client-a' });
  const ctx = new TurnContext(id, repository, await repository.load(id), `turn:${id}:1`);
  return { id, repository, ctx };
}

import { Logger } from '@nestjs/common';
import { loadConfig } from '@parley/config';
import { PostgresEventStore, WrongExpectedVersion, type ReadStreamOptions } from '@parley/event-store';
import { createPgPool } from '@parley/platform';
import { createTestDatabase, snapshotFixture, type TestDatabase } from '@parley/testing';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ConversationEvent, MessageRecorded } from '@parley/domain';
import { CONVERSATION_EVENT_SCHEMAS, type EventSchemas } from '@parley/domain';
import { ConversationSignals, type AppendedSignal } from './conversation-signals';
import { approximateBytes, ConversationRepository } from './conversation.repository';

const meta = { actor: 'client-a' };
const started = (id: string): ConversationEvent => ({
  type: 'ConversationStarted',
  data: {
    conversationId: id,
    agentCode: 'HELPDESK',
    actionCode: 'ANSWER',
    owner: 'client-a',
    metadata: {},
    snapshot: snapshotFixture(),
  },
});
const message = (sequence: number, content: string): ConversationEvent => ({
  type: 'MessageRecorded',
  data: { sequence, role: 'US', content, turnNo: 1, tokenCount: 1 },
});

describe('ConversationRepository', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  /** Every readStream call: how many events it returned, and from which revision it read. */
  let reads: { fromRevision?: bigint; events: number }[];
  /** readStream calls, those that found no stream included. */
  let asked = 0;

  const repository = (cacheMb = 16, signals = new ConversationSignals(), schemas?: EventSchemas) =>
    new ConversationRepository(store, signals, loadConfig({ CONVERSATION_CACHE_MB: String(cacheMb) }), schemas);

  beforeAll(async () => {
    db = await createTestDatabase('conversation_repository');
    pool = createPgPool({ url: db.url, max: 4 });
    store = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
    const readStream = store.readStream.bind(store);
    store.readStream = async (streamId: string, options?: ReadStreamOptions) => {
      asked++;
      const events = await readStream(streamId, options);
      reads.push({ fromRevision: options?.fromRevision, events: events.length });
      return events;
    };
  });
  beforeEach(() => {
    reads = [];
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('writes a conversation whose id it made up without reading its stream first', async () => {
    const id = randomUUID();
    const repo = repository();
    repo.madeUp(id);
    const before = asked;
    const loaded = await repo.loadForWrite(id);
    expect(loaded).toEqual({ state: expect.objectContaining({ status: 'none' }), revision: null, fresh: false });
    const appended = await repo.append(id, loaded, [started(id)], meta);
    expect(asked).toBe(before);
    // From its first append on, the id is an ordinary conversation.
    expect(await repo.loadForWrite(id)).toEqual({ state: appended.state, revision: appended.revision, fresh: false });
    expect(asked).toBe(before);
  });

  it('refuses the append of a made-up id that exists after all, rather than writing over it', async () => {
    const id = randomUUID();
    const theirs = repository();
    await theirs.append(id, await theirs.load(id), [started(id)], meta);
    const mine = repository();
    mine.madeUp(id);
    await expect(mine.append(id, await mine.loadForWrite(id), [started(id)], meta)).rejects.toBeInstanceOf(
      WrongExpectedVersion,
    );
    expect((await mine.load(id)).revision).toBe(0n);
  });

  it('after its own append, a load reads only the events after the kept revision', async () => {
    const id = randomUUID();
    const repo = repository();
    const first = await repo.append(id, await repo.load(id), [started(id), message(1, 'hello')], meta);
    reads = [];

    const loaded = await repo.load(id);

    expect(reads).toEqual([{ fromRevision: first.revision + 1n, events: 0 }]);
    expect(loaded).toEqual({ state: first.state, revision: first.revision });
  });

  it("sees another process's appends, folding them onto the kept state", async () => {
    const id = randomUUID();
    const mine = repository();
    const theirs = repository();
    await mine.append(id, await mine.load(id), [started(id)], meta);
    const before = await mine.load(id);
    await theirs.append(id, await theirs.load(id), [message(1, 'from elsewhere')], meta);
    reads = [];

    const loaded = await mine.load(id);

    expect(reads).toEqual([{ fromRevision: 1n, events: 1 }]);
    expect(loaded.revision).toBe(1n);
    expect(loaded.state).toEqual((await repository(0).load(id)).state);
    expect(loaded.state.status !== 'none' && loaded.state.transcript.map((m) => m.content)).toEqual(['from elsewhere']);
    expect(before.revision).toBe(0n);
  });

  it('refuses to append on a state another process has moved past (the expected revision still guards)', async () => {
    const id = randomUUID();
    const mine = repository();
    const theirs = repository();
    await mine.append(id, await mine.load(id), [started(id)], meta);
    const stale = await mine.load(id);
    await theirs.append(id, await theirs.load(id), [message(1, 'first')], meta);

    await expect(mine.append(id, stale, [message(1, 'second')], meta)).rejects.toBeInstanceOf(WrongExpectedVersion);
    const after = await mine.load(id);
    expect(after.state.status !== 'none' && after.state.transcript.map((m) => m.content)).toEqual(['first']);
  });

  it('forgets a deleted conversation instead of serving the kept state', async () => {
    const id = randomUUID();
    const repo = repository();
    await repo.append(id, await repo.load(id), [started(id)], meta);
    await store.deleteStream(`conversation-${id}`);

    expect(await repo.load(id)).toEqual({ state: { status: 'none' }, revision: null });
  });

  it('keeps states within CONVERSATION_CACHE_MB, dropping the least recently used first', async () => {
    const repo = repository(1);
    const long = 'x'.repeat(200_000); // ≈ 400 KB a state: two fit in 1 MiB, three do not
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) await repo.append(id, await repo.load(id), [started(id), message(1, long)], meta);
    reads = [];

    // Newest first: the two kept ones read only what is new; the first one was dropped.
    for (const id of [...ids].reverse()) await repo.load(id);

    expect(reads.map((r) => r.fromRevision)).toEqual([2n, 2n, undefined]);
    expect(approximateBytes((await repo.load(ids[2])).state)).toBeGreaterThan(400_000);
  });

  it('counts a memory summary in the size of a kept state', async () => {
    const id = randomUUID();
    const repo = repository();
    await repo.append(id, await repo.load(id), [started(id), message(1, 'hello')], meta);
    const before = approximateBytes((await repo.load(id)).state);
    const summary = 'y'.repeat(100_000);
    const data = {
      ...{ turnNo: 1, fromSequence: 1, throughSequence: 1, summary, model: 'm', responseModel: null },
      ...{ inputTokens: 1, outputTokens: 1, usageEstimated: false, cost: 0, latencyMs: 1 },
    };
    await repo.append(id, await repo.load(id), [{ type: 'MemorySummarized', data }], meta);
    expect(approximateBytes((await repo.load(id)).state)).toBeGreaterThanOrEqual(before + 200_000);
  });

  it('with CONVERSATION_CACHE_MB=0 folds the whole stream on every load', async () => {
    const id = randomUUID();
    const repo = repository(0);
    await repo.append(id, await repo.load(id), [started(id), message(1, 'hello')], meta);
    reads = [];

    await repo.load(id);

    expect(reads).toEqual([{ fromRevision: undefined, events: 2 }]);
  });

  it('signals each append with the state and revision it folded to', async () => {
    const id = randomUUID();
    const signals = new ConversationSignals();
    const seen: AppendedSignal[] = [];
    signals.onAppended(id, (s) => seen.push(s));
    const repo = repository(100, signals);

    const appended = await repo.append(id, await repo.load(id), [started(id), message(1, 'hello')], meta);

    expect(seen).toEqual([{ types: ['ConversationStarted', 'MessageRecorded'], ...appended }]);
  });

  describe('schema evolution', () => {
    /** MessageRecorded's data as version 1 stored it: the text under `text`. */
    type MessageRecordedV1 = Omit<MessageRecorded['data'], 'content'> & { text: string | null };
    /** This build's schemas, as if MessageRecorded had moved on to version 2 (`text` became `content`). */
    const evolved: EventSchemas = {
      current: { ...CONVERSATION_EVENT_SCHEMAS.current, MessageRecorded: 2 },
      steps: {
        MessageRecorded: {
          1: ({ text, ...rest }: MessageRecordedV1): MessageRecorded['data'] => ({ ...rest, content: text }),
        },
      },
    };
    const raw = (type: string, schemaVersion: number, data: unknown) => ({
      eventId: randomUUID(),
      type,
      schemaVersion,
      data,
      metadata: { occurredAt: '2026-11-20T10:00:00.000Z', actor: 'client-a' },
    });
    const contents = (state: Awaited<ReturnType<ConversationRepository['load']>>['state']) =>
      state.status === 'none' ? null : state.transcript.map((m) => m.content);
    let warn: jest.SpyInstance;
    beforeEach(() => {
      warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    });
    afterEach(() => warn.mockRestore());

    it('reads an event stored at an older version upcast to the current one, and leaves it stored as it was', async () => {
      const id = randomUUID();
      const v1: MessageRecordedV1 = { sequence: 1, role: 'US', text: 'written by v1', turnNo: 1, tokenCount: 3 };
      await store.append(`conversation-${id}`, [
        raw('ConversationStarted', 1, started(id).data),
        raw('MessageRecorded', 1, v1),
      ]);

      const repo = repository(0, new ConversationSignals(), evolved);
      const loaded = await repo.load(id);
      await repo.append(id, loaded, [message(2, 'written by v2')], meta);

      expect(contents(loaded.state)).toEqual(['written by v1']);
      expect(contents((await repo.load(id)).state)).toEqual(['written by v1', 'written by v2']);
      const stored = await store.readStream(`conversation-${id}`);
      expect(stored.map((e) => [e.type, e.schemaVersion])).toEqual([
        ['ConversationStarted', 1],
        ['MessageRecorded', 1],
        ['MessageRecorded', 2],
      ]);
      expect(stored[1].data).toEqual(v1);
      expect(await store.verifyStream(`conversation-${id}`)).toMatchObject({ ok: true });
      expect(warn).not.toHaveBeenCalled();
    });

    it('loads a stream holding an event type a newer Parley wrote, skipping it and warning once per type', async () => {
      const id = randomUUID();
      await store.append(`conversation-${id}`, [
        raw('ConversationStarted', 1, started(id).data),
        raw('ConversationRenamedInFuture', 1, { title: 'new' }),
        raw('MessageRecorded', 1, message(1, 'after it').data),
        raw('ConversationRenamedInFuture', 1, { title: 'newer' }),
      ]);

      const loaded = await repository(0).load(id);
      const again = await repository(0).atCommand(id, 'no such command');

      expect(loaded.revision).toBe(3n);
      expect(contents(loaded.state)).toEqual(['after it']);
      expect(again.state).toEqual(loaded.state);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(/ConversationRenamedInFuture.*newer Parley/);
    });

    it('skips a version newer than its own of a type it knows', async () => {
      const id = randomUUID();
      await store.append(`conversation-${id}`, [
        raw('ConversationStarted', 1, started(id).data),
        raw('MessageRecorded', 2, { sequence: 1, role: 'US', body: { text: 'v2 shape' }, turnNo: 1, tokenCount: 1 }),
      ]);

      const loaded = await repository(0).load(id);

      expect(loaded.revision).toBe(1n);
      expect(contents(loaded.state)).toEqual([]);
      expect(warn.mock.calls.map(([text]) => text)).toEqual([
        expect.stringMatching(/version 2 of MessageRecorded \(this Parley reads up to version 1\)/),
      ]);
    });
  });
});

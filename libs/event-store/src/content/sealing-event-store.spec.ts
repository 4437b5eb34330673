import { createPgPool, SecretCipher } from '@parley/platform';
import { createTestDatabase, until, type TestDatabase } from '@parley/testing';
import { createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { PostgresEventStore } from '../postgres/postgres-event-store';
import type { EventToAppend } from '../event-store.port';
import { ConversationKeys } from './conversation-keys';
import { ERASED, forgetOpened, openToken, sealValue } from './content-cipher';
import { openContent, SealingEventStore } from './sealing-event-store';

const OLD_KEY = randomBytes(32).toString('hex');
const NEW_KEY = randomBytes(32).toString('hex');

const event = (type: string, data: unknown): EventToAppend => ({ eventId: randomUUID(), type, data });
const turn = (): EventToAppend[] => [
  event('MessageRecorded', { sequence: 1, role: 'US', content: 'SECRET-hello', turnNo: 1, tokenCount: 3 }),
  event('AttachmentRecorded', {
    messageSequence: 1,
    attachmentSequence: 1,
    mediaType: 'image/png',
    url: 'https://SECRET.example.com/a.png',
  }),
  event('ChunksReceived', {
    turnNo: 1,
    callNo: 1,
    attempt: 1,
    text: 'SECRET-chunk',
    reasoning: 'SECRET-why',
    count: 2,
  }),
  event('MessageRecorded', {
    sequence: 2,
    role: 'AS',
    content: null,
    turnNo: 1,
    tokenCount: 9,
    reasoning: 'SECRET-why',
    toolCalls: [{ id: 'c1', name: 'ORDER_STATUS', arguments: '{"orderId":"SECRET-42"}' }],
  }),
  event('AnswersSubmitted', { turnNo: 1, sequence: 3, toolCallId: 'q1', answers: { size: 'SECRET-XL' } }),
  event('ConversationCompleted', {
    turnNo: 1,
    finishReason: 'stop',
    reply: 'SECRET-reply',
    responseModel: 'm',
    output: { total: 'SECRET-7' },
  }),
];

describe('SealingEventStore: content sealed with per-conversation keys', () => {
  let db: TestDatabase;
  let pool: Pool;
  let raw: PostgresEventStore;
  const sealing = (key: string | null, previous: string[] = [], encrypt = true) =>
    new SealingEventStore(raw, new ConversationKeys(pool, new SecretCipher(key, previous)), { encrypt });
  const rawText = async (streamId: string) =>
    JSON.stringify((await pool.query('select data from es_events where stream_id = $1', [streamId])).rows);

  beforeAll(async () => {
    db = await createTestDatabase('sealing');
    pool = createPgPool({ url: db.url, max: 4 });
    raw = new PostgresEventStore(pool, { maxEventBytes: 1 << 20, pollMs: 50 });
  });
  afterAll(async () => {
    await raw.close();
    await pool.end();
    await db.drop();
  });

  it('stores no content in plaintext, opens it on every read path, and keeps structure readable', async () => {
    const store = sealing(OLD_KEY);
    const streamId = `conversation-${randomUUID()}`;
    await store.append(streamId, turn());
    const stored = await rawText(streamId);
    expect(stored).not.toContain('SECRET');
    expect(stored).toContain('ORDER_STATUS');
    expect(stored).toContain('"tokenCount":9');

    // As another process would: nothing opened or sealed here is remembered.
    forgetOpened();
    const read = await store.readStream(streamId);
    expect(read.map((e) => e.data)).toEqual(turn().map((e) => e.data));
    const feedOf = async () =>
      (await store.readPage(null, { categories: ['conversation'] }, 1000)).events.filter(
        (e) => e.streamId === streamId,
      );
    await until(async () => (await feedOf()).length === 6, 10_000, 50);
    expect((await feedOf()).map((e) => e.data)).toEqual(turn().map((e) => e.data));
    const all = (await store.readAll({ maxCount: 1000 })).filter((e) => e.streamId === streamId);
    expect(all.map((e) => e.data)).toEqual(turn().map((e) => e.data));
    const controller = new AbortController();
    const seen: unknown[] = [];
    // Until all six arrived: the feed shows an append only once older transactions (of any
    // database on the server) have ended.
    const timer = setTimeout(() => controller.abort(), 10_000);
    for await (const item of store.subscribeToAll({ signal: controller.signal })) {
      if (item.kind === 'event' && item.event.streamId === streamId) seen.push(item.event.data);
      if (seen.length === 6) break;
    }
    clearTimeout(timer);
    controller.abort();
    expect(seen).toEqual(turn().map((e) => e.data));
    // What the projections read: sealed.
    expect(JSON.stringify((await raw.readStream(streamId)).map((e) => e.data))).not.toContain('SECRET');
    expect(await store.verifyStream(streamId)).toMatchObject({ ok: true, checked: 6 });
  });

  describe("a new conversation's first append", () => {
    const start = (owner: string): EventToAppend[] => [
      event('ConversationStarted', { owner, agentCode: 'A', actionCode: 'B' }),
      ...turn(),
    ];
    const keyRows = async (id: string) =>
      (await pool.query('select owner, erased_at from conversation_keys where conversation_id = $1', [id])).rows;
    /** Counts the statements `pool` sends while `work` runs. */
    const statementsDuring = async (work: () => Promise<unknown>) => {
      const texts: string[] = [];
      const query = pool.query.bind(pool);
      const spy = jest.spyOn(pool, 'query').mockImplementation(((q: unknown, ...rest: unknown[]) => {
        texts.push(typeof q === 'string' ? q : (q as { text: string }).text);
        return (query as (...args: unknown[]) => unknown)(q, ...rest);
      }) as never);
      try {
        await work();
      } finally {
        spy.mockRestore();
      }
      return texts;
    };

    it('stores the key in its own statement: one round trip, the key and the events committed together', async () => {
      const store = sealing(OLD_KEY);
      const id = randomUUID();
      const statements = await statementsDuring(() =>
        store.append(`conversation-${id}`, start('alice'), { expected: 'no_stream' }),
      );
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/^with alongside as \(insert into conversation_keys .*es_append/s);
      expect(await keyRows(id)).toEqual([{ owner: 'alice', erased_at: null }]);
      expect(await rawText(`conversation-${id}`)).not.toContain('SECRET');
      // Another process, with nothing cached, opens it with the stored key.
      forgetOpened();
      expect((await sealing(OLD_KEY).readStream(`conversation-${id}`)).map((e) => e.data)).toEqual(
        start('alice').map((e) => e.data),
      );
    });

    it('stores no key when the append is refused (the stream exists): nothing of it is written', async () => {
      const store = sealing(OLD_KEY);
      const id = randomUUID();
      await raw.append(`conversation-${id}`, [event('MessageRecorded', { sequence: 1, role: 'US', content: 'x' })]);
      await expect(store.append(`conversation-${id}`, start('alice'), { expected: 'no_stream' })).rejects.toMatchObject(
        { name: 'WrongExpectedVersion' },
      );
      expect(await keyRows(id)).toEqual([]);
      expect((await raw.readStream(`conversation-${id}`)).map((e) => e.type)).toEqual(['MessageRecorded']);
    });

    it('uses the row a conversation has already: erased before it started, its content is stored as [erased]', async () => {
      const store = sealing(OLD_KEY);
      const id = randomUUID();
      await sealing(OLD_KEY).keys.erase(id, 'alice');
      await store.append(`conversation-${id}`, start('alice'), { expected: 'no_stream' });
      expect(await rawText(`conversation-${id}`)).not.toContain('SECRET');
      const read = await sealing(OLD_KEY).readStream(`conversation-${id}`);
      expect(read.find((e) => e.type === 'MessageRecorded')!.data).toMatchObject({ content: ERASED });
      expect(await keyRows(id)).toHaveLength(1);
    });
  });

  it('after an erasure reads every content field as [erased], stores later content as [erased], and verify is intact', async () => {
    const store = sealing(OLD_KEY);
    const id = randomUUID();
    const streamId = `conversation-${id}`;
    await store.append(streamId, turn());
    expect(await store.keys.erase(id, 'alice')).toMatchObject({ already: false });
    const again = await store.keys.erase(id, 'bob');
    expect(again.already).toBe(true);
    await store.append(streamId, [
      event('MessageRecorded', { sequence: 9, role: 'US', content: 'SECRET-late', turnNo: 2, tokenCount: 1 }),
    ]);

    for (const reader of [store, sealing(OLD_KEY)]) {
      const read = await reader.readStream(streamId);
      const text = JSON.stringify(read.map((e) => e.data));
      expect(text).not.toContain('SECRET');
      expect(read[0].data).toMatchObject({ content: ERASED, tokenCount: 3 });
      expect(read[3].data).toMatchObject({ toolCalls: [{ name: 'ORDER_STATUS', arguments: ERASED }], tokenCount: 9 });
      expect(read[4].data).toMatchObject({ answers: { size: ERASED } });
      expect(read[5].data).toMatchObject({ reply: ERASED, output: ERASED, finishReason: 'stop' });
    }
    expect(await rawText(streamId)).not.toContain('SECRET');
    expect(await store.verifyStream(streamId)).toMatchObject({ ok: true, checked: 7 });
    const [row] = (await pool.query('select * from conversation_keys where conversation_id = $1', [id])).rows;
    expect(row).toMatchObject({ wrapped_key: null, key_id: null, erased_by: 'alice' });
  });

  it('passes through streams stored without a key, and erasure still hides their content when read', async () => {
    const id = randomUUID();
    const streamId = `conversation-${id}`;
    await raw.append(streamId, turn());
    const store = sealing(OLD_KEY);
    expect((await store.readStream(streamId)).map((e) => e.data)).toEqual(turn().map((e) => e.data));
    // With encryption off, a new conversation gets no key either.
    const plainId = randomUUID();
    await sealing(OLD_KEY, [], false).append(`conversation-${plainId}`, turn());
    expect(await rawText(`conversation-${plainId}`)).toContain('SECRET');
    await store.keys.erase(id, 'admin');
    expect(JSON.stringify((await store.readStream(streamId)).map((e) => e.data))).not.toContain('SECRET');
  });

  it('re-wraps data keys on rotation: events stay readable with the new key alone', async () => {
    const streamId = `conversation-${randomUUID()}`;
    await sealing(OLD_KEY).append(streamId, turn());
    // The new key current, the old one still known: readable, then rotated.
    forgetOpened();
    const rotating = sealing(NEW_KEY, [OLD_KEY]);
    expect((await rotating.readStream(streamId)).map((e) => e.data)).toEqual(turn().map((e) => e.data));
    expect(await rotating.keys.rotate()).toBeGreaterThanOrEqual(1);
    expect(await rotating.keys.rotate()).toBe(0);
    const { rows } = await pool.query('select distinct key_id from conversation_keys where wrapped_key is not null');
    expect(rows).toHaveLength(1);
    // The old key forgotten: still readable.
    forgetOpened();
    expect((await sealing(NEW_KEY).readStream(streamId)).map((e) => e.data)).toEqual(turn().map((e) => e.data));
  });

  it('reads a conversation another process gave a key after this one cached it as keyless', async () => {
    const id = randomUUID();
    const streamId = `conversation-${id}`;
    const reader = sealing(OLD_KEY, [], false);
    await reader.append(streamId, turn().slice(0, 1));
    expect(await rawText(streamId)).toContain('SECRET');
    // Another process, encrypting, appends next: the conversation gets a key there.
    await sealing(OLD_KEY).append(streamId, turn().slice(1));
    forgetOpened();
    expect((await reader.readStream(streamId)).map((e) => e.data)).toEqual(turn().map((e) => e.data));
  });

  it('gives a new conversation one key in one statement, the same key to processes that start it at once', async () => {
    const queries = jest.spyOn(pool, 'query');
    try {
      const id = randomUUID();
      const first = new ConversationKeys(pool, new SecretCipher(OLD_KEY));
      const made = await first.stateOf(id, true, 'svc-a');
      expect(queries).toHaveBeenCalledTimes(1);
      expect(made.kind).toBe('key');
      // Eight processes (key caches of their own) race for another conversation: one row, one key.
      const raced = randomUUID();
      const states = await Promise.all(
        Array.from({ length: 8 }, () => new ConversationKeys(pool, new SecretCipher(OLD_KEY)).stateOf(raced, true)),
      );
      const keys = states.map((s) => (s.kind === 'key' ? s.key.export().toString('hex') : s.kind));
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
      const { rows } = await pool.query('select count(*)::int as n from conversation_keys where conversation_id = $1', [
        raced,
      ]);
      expect(rows[0].n).toBe(1);
      // An existing row is kept as it is: an erased conversation gets no new key.
      await first.erase(id, 'auditor');
      expect((await new ConversationKeys(pool, new SecretCipher(OLD_KEY)).stateOf(id, true)).kind).toBe('erased');
    } finally {
      queries.mockRestore();
    }
  });

  it('leaves other categories alone', async () => {
    const streamId = `catalog-${randomUUID()}`;
    await sealing(OLD_KEY).append(streamId, [event('MessageRecorded', { content: 'SECRET-not-a-conversation' })]);
    expect(await rawText(streamId)).toContain('SECRET');
  });
});

describe('sealed values', () => {
  const key = createSecretKey(randomBytes(32));
  const a = randomUUID();

  it('open only in their own conversation, and a copy elsewhere stays sealed', () => {
    const token = sealValue(key, a, 'SECRET');
    forgetOpened();
    expect(openToken(key, a, token)).toBe('SECRET');
    forgetOpened();
    expect(openToken(key, randomUUID(), token)).toBe(token);
  });

  it('open inside JSON texts and sentences as the read models keep them, and read as [erased] once erased', () => {
    const answer = sealValue(key, a, 'SECRET "quoted"');
    const output = sealValue(key, a, { total: 7 });
    const row = {
      result: JSON.stringify({ answers: { size: answer } }),
      content: `The user rejected this tool call: ${answer}.`,
      output,
      createdAt: new Date(0),
    };
    forgetOpened();
    expect(openContent(a, row, { kind: 'key', key })).toEqual({
      result: JSON.stringify({ answers: { size: 'SECRET "quoted"' } }),
      content: 'The user rejected this tool call: SECRET "quoted".',
      output: { total: 7 },
      createdAt: new Date(0),
    });
    expect(openContent(a, row, { kind: 'erased', erasedAt: '' })).toEqual({
      result: JSON.stringify({ answers: { size: ERASED } }),
      content: `The user rejected this tool call: ${ERASED}.`,
      output: ERASED,
      createdAt: new Date(0),
    });
  });
});

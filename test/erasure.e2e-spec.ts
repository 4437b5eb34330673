import { CONVERSATION_KEYS, EVENT_STORE, type ConversationKeys, type EventStore } from '@parley/event-store';
import { MemoryStore } from '@parley/knowledge';
import { PROJECTIONS, rebuildProjections } from '@parley/read-models';
import { PG_POOL } from '@parley/platform';
import { until } from '@parley/testing';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

/** Words that appear only in the conversation's content: none may be readable after erasure. */
const SECRETS = {
  message: 'Where is parcel PLUMTREE-4471',
  attachment: 'data:image/png;name=KESTREL;base64,iVBORw0KGgo=',
  reasoning: 'MARIGOLD deliberation about the parcel',
  orderId: 'ORD-QUOKKA-88',
  question: 'Which WALRUS colour?',
  answer: 'NARWHAL-teal',
  reply: 'Your parcel ships soon, OCELOT.',
};
const WORDS = ['PLUMTREE', 'KESTREL', 'MARIGOLD', 'QUOKKA', 'WALRUS', 'NARWHAL', 'OCELOT'];
const root = join(__dirname, '..');
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('erasure by crypto-shredding', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let pool: Pool;
  let alice: string;
  let bob: string;
  let carol: string;

  const asKey = (key: string) => (method: string, path: string, body?: unknown) =>
    parley.call(method, path, body, bearer(key));
  const newKey = async (subject: string) =>
    (await parley.call('POST', '/api/v1/keys', { subject, roles: ['client'] })).body.key as string;
  /** `parley <args>` as the operator, the way the CLI tests run it (`keys`: other encryption keys). */
  const cli = (...args: string[]) => cliWith({}, ...args);
  const cliWith = (keys: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: parley.db.url,
            PARLEY_ENCRYPTION_KEY: parley.config.security.encryptionKey!,
            LOG_LEVEL: 'silent',
            ...keys,
          },
        },
        (err, stdout) => resolve({ code: err ? Number(err.code) : 0, stdout }),
      );
    });
  const noSecret = (label: string, text: string) => {
    for (const word of WORDS)
      if (text.includes(word)) throw new Error(`${label} still shows ${word}: ${text.slice(0, 400)}`);
  };
  /** The read-model rows a conversation left in PostgreSQL, as JSON text. */
  const readModelRows = async (id: string) => {
    const tables = [
      'rm_conversations',
      'rm_messages',
      'rm_attachments',
      'rm_tool_calls',
      'rm_pending',
      'rm_model_calls',
    ];
    const parts = await Promise.all(
      tables.map((t) => pool.query(`select row_to_json(x)::text as r from ${t} x where conversation_id = $1`, [id])),
    );
    return parts.flatMap((p) => p.rows.map((r: { r: string }) => r.r)).join('\n');
  };
  /** Every raw row the conversation left in PostgreSQL: its events and its read-model rows. */
  const rawRows = async (id: string) => {
    const { rows } = await pool.query(`select row_to_json(e)::text as r from es_events e where stream_id = $1`, [
      `conversation-${id}`,
    ]);
    return `${rows.map((r: { r: string }) => r.r).join('\n')}\n${await readModelRows(id)}`;
  };
  const sse = async (id: string): Promise<string> => {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 10_000);
    try {
      const res = await fetch(`${parley.url}/api/v1/conversations/${id}/stream`, {
        headers: bearer(ADMIN_KEY),
        signal: abort.signal,
      });
      let body = '';
      for await (const chunk of res.body!) {
        body += Buffer.from(chunk).toString();
        if (/event: Conversation(Killed|Terminated)\n/.test(body) && body.includes('event: ConversationErased\n'))
          break;
      }
      return body;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  };

  beforeAll(async () => {
    parley = await startParley('erasure', {}, undefined, undefined, { habit: 'deepseek' });
    store = parley.app.get(EVENT_STORE);
    pool = parley.app.get(PG_POOL);
    [alice, bob, carol] = await Promise.all([newKey('alice'), newKey('bob'), newKey('carol')]);
  });
  afterAll(() => parley?.close());
  beforeEach(() => parley.simulator.reset());

  /** A conversation of `key`'s subject with text, reasoning, a tool call, a question and its answer, an attachment. */
  const fullConversation = async (key: string) => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          reasoning: SECRETS.reasoning,
          toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: SECRETS.orderId }, id: 'call_status' }],
        },
      },
      // The answer is the question's tool result: matched before the order status's.
      { when: { toolResult: { name: 'AskUserQuestion' } }, reply: { text: SECRETS.reply } },
      {
        when: { toolResult: { name: 'ORDER_STATUS' } },
        reply: {
          toolCalls: [
            {
              name: 'AskUserQuestion',
              arguments: { questions: [{ key: 'colour', question: SECRETS.question }] },
              id: 'call_ask',
            },
          ],
        },
      },
    ]);
    const as = asKey(key);
    const started = await as('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ANSWER' });
    expect(started.status).toBe(201);
    const id = started.body.conversationId as string;
    const asked = await as('POST', `/api/v1/conversations/${id}/messages`, {
      content: SECRETS.message,
      attachments: [{ mediaType: 'image/png', url: SECRETS.attachment }],
    });
    expect(asked.body).toMatchObject({ status: 'WA' });
    const answered = await as('POST', `/api/v1/conversations/${id}/answers`, { answers: { colour: SECRETS.answer } });
    expect(answered.body).toMatchObject({ status: 'CO', reply: SECRETS.reply });
    return { id, position: answered.body.position as string };
  };

  it('keeps content sealed at rest, then erases it from every route and CLI command while verify stays intact', async () => {
    const { id, position } = await fullConversation(alice);
    const as = asKey(alice);
    // Before: the owner reads the plaintext through the queries and the events.
    const before = await as('GET', `/api/v1/conversations/${id}/messages?minPosition=${encodeURIComponent(position)}`);
    expect(JSON.stringify(before.body)).toContain('PLUMTREE');
    expect(JSON.stringify(before.body)).toContain('NARWHAL');
    expect(JSON.stringify((await as('GET', `/api/v1/conversations/${id}/tool-calls`)).body)).toContain('QUOKKA');
    const events = (await as('GET', `/api/v1/conversations/${id}/events`)).body;
    expect(JSON.stringify(events)).toContain('MARIGOLD');
    // At rest: nothing readable in the events or the read models.
    noSecret('raw rows before erasure', await rawRows(id));
    expect(await rawRows(id)).toContain('ORDER_STATUS');

    // Another client cannot erase it; bad ids are refused and change nothing.
    expect((await asKey(bob)('POST', `/api/v1/conversations/${id}/erase`, {})).body.error).toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await as('POST', `/api/v1/conversations/not-a-uuid/erase`, {})).body.error.code).toBe('VALIDATION_FAILED');
    expect(
      (await as('POST', `/api/v1/conversations/00000000-0000-4000-8000-000000000000/erase`, {})).body.error.code,
    ).toBe('NOT_FOUND');
    expect(JSON.stringify((await as('GET', `/api/v1/conversations/${id}/messages`)).body)).toContain('PLUMTREE');

    // The owner erases it; erasing again answers the same.
    const erased = await as('POST', `/api/v1/conversations/${id}/erase`, {});
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ conversationId: id, status: 'TE', erasedAt: expect.any(String) });
    const again = await parley.call('POST', `/api/v1/conversations/${id}/erase`, {});
    expect(again.status).toBe(200);
    expect(again.body.erasedAt).toBe(erased.body.erasedAt);
    const min = `minPosition=${encodeURIComponent(erased.body.position)}`;

    // Every route, as the owner and as the admin (auditor routes).
    const routes = [
      `/api/v1/conversations/${id}?${min}`,
      `/api/v1/conversations/${id}/messages?${min}`,
      `/api/v1/conversations/${id}/tool-calls?${min}`,
      `/api/v1/conversations/${id}/pending-question?${min}`,
      `/api/v1/conversations/${id}/pending-approvals?${min}`,
      `/api/v1/conversations/${id}/model-calls?${min}`,
      `/api/v1/conversations/${id}/events?limit=1000`,
      `/api/v1/conversations/${id}/state`,
      `/api/v1/conversations?${min}`,
    ];
    for (const path of routes) {
      const res = await as('GET', path);
      // No pending question any more: 404, as for any conversation that waits for none.
      expect([path, res.status]).toEqual([path, path.includes('pending-question') ? 404 : 200]);
      noSecret(path, JSON.stringify(res.body));
    }
    const feed = await parley.call('GET', '/api/v1/events?limit=1000');
    expect(feed.status).toBe(200);
    noSecret('global feed', JSON.stringify(feed.body));
    const verify = await parley.call('GET', `/api/v1/conversations/${id}/verify`);
    expect(verify.body).toMatchObject({ ok: true, firstBadRevision: null });
    const replay = await sse(id);
    expect(replay).toContain('event: ConversationErased');
    noSecret('SSE replay', replay);

    // What stays: structure, timing, tokens and cost; content reads as [erased].
    const messages = (await as('GET', `/api/v1/conversations/${id}/messages?${min}`)).body;
    expect(messages[0]).toMatchObject({
      llmMessageRole: 'US',
      llmMessageContent: '[erased]',
      biTokenCount: expect.any(Number),
      attachments: [{ llmMediaType: 'image/png', attachmentUrl: '[erased]' }],
    });
    expect(JSON.stringify(messages)).toContain('[erased]');
    const toolCalls = (await as('GET', `/api/v1/conversations/${id}/tool-calls?${min}`)).body;
    expect(toolCalls).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          llmToolCallName: 'ORDER_STATUS',
          llmToolCallArguments: '[erased]',
          result: '[erased]',
        }),
      ]),
    );
    const modelCalls = (await as('GET', `/api/v1/conversations/${id}/model-calls?${min}`)).body;
    expect(modelCalls.length).toBeGreaterThanOrEqual(3);
    expect(modelCalls[0].inputTokens).toBeGreaterThan(0);
    const conversation = (await as('GET', `/api/v1/conversations/${id}?${min}`)).body;
    expect(conversation.biInputTokenCount).toBeGreaterThan(0);
    expect(conversation.biEstimatedCost).toBeGreaterThan(0);
    const stored = (await as('GET', `/api/v1/conversations/${id}/events?limit=1000`)).body as any[];
    const completed = stored.filter((e) => e.type === 'ModelCallCompleted');
    expect(completed[0].data).toMatchObject({ inputTokens: expect.any(Number), cost: expect.any(Number) });
    expect(completed[0].data.latencyMs).toEqual(expect.any(Number));
    expect(stored.at(-1)).toMatchObject({ type: 'ConversationErased', data: { by: 'alice' } });
    expect(stored.find((e) => e.type === 'AttachmentRecorded').data).toMatchObject({
      mediaType: 'image/png',
      url: '[erased]',
    });

    // Read models purged, not only unreadable.
    // The read models hold not even the ciphertext any more (the events keep theirs, unreadable).
    await until(async () => !(await readModelRows(id)).includes('pc1'), 5000, 100);
    expect(await readModelRows(id)).toContain('[erased]');
    noSecret('raw rows after erasure', await rawRows(id));
    // A rebuild of the read models from the stream gives the same purged rows.
    const purged = await readModelRows(id);
    await rebuildProjections(pool, store, PROJECTIONS);
    expect(await readModelRows(id)).toEqual(purged);

    // The conversation takes no more commands.
    const refused = await as('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello again' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONVERSATION_CLOSED', details: { erased: true } });

    // Every CLI command.
    for (const command of ['events', 'state', 'export']) {
      const out = await cli(command, id);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(command === 'state' ? '"erased": true' : 'ConversationErased');
      noSecret(`parley ${command}`, out.stdout);
    }
    const verified = await cli('verify', id);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^ok: \d+ events verified/);
  }, 120_000);

  it('stops a turn in progress: the erasure kills it, and nothing it still appends holds content', async () => {
    parley.simulator.script([{ reply: { hang: true } }]);
    const as = asKey(alice);
    const id = (await as('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    await as('POST', `/api/v1/conversations/${id}/messages`, { content: SECRETS.message, wait: false });
    // The model was asked and does not answer: the turn is in progress.
    await until(async () => parley.simulator.requests.length > 0, 10_000, 50);
    const erased = await as('POST', `/api/v1/conversations/${id}/erase`, {});
    expect(erased.body).toMatchObject({ status: 'KI' });
    const events = await store.readStream(`conversation-${id}`);
    expect(events.map((e) => e.type).slice(-2)).toEqual(['ConversationKilled', 'ConversationErased']);
    expect(events.find((e) => e.type === 'ConversationKilled')!.data).toEqual({ reason: 'erased' });
    noSecret('a killed turn', JSON.stringify(events.map((e) => e.data)));
    // Bad subjects are refused and change nothing; an unknown one erases nothing.
    expect((await parley.call('POST', '/api/v1/subjects/%20/erase', {})).body.error.code).toBe('VALIDATION_FAILED');
    expect((await parley.call('POST', '/api/v1/subjects/nobody-at-all/erase', {})).body).toEqual({
      subject: 'nobody-at-all',
      conversations: 0,
      memories: 0,
    });
  }, 60_000);

  it('erases every conversation and long-term memory of a subject, and only that subject', async () => {
    const memories = new MemoryStore(pool);
    await memories.init();
    const fact = (owner: string, text: string) =>
      memories.remember({
        owner,
        scope: 'user',
        scopeId: owner,
        text,
        importance: 0.5,
        expiresAt: null,
        embedding: [1, 0, 0],
      });
    const first = await fullConversation(carol);
    const second = await fullConversation(carol);
    const other = await fullConversation(bob);
    await fact('carol', 'carol likes OCELOT');
    await fact('bob', 'bob likes tea');

    expect((await asKey(bob)('POST', '/api/v1/subjects/carol/erase', {})).body.error.code).toBe('FORBIDDEN');
    // A key whose conversation was never stored (a start that failed after it was made) is skipped.
    await parley.app.get<ConversationKeys>(CONVERSATION_KEYS).stateOf(randomUUID(), true, 'carol');
    const res = await asKey(carol)('POST', '/api/v1/subjects/carol/erase', {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ subject: 'carol', conversations: 2, memories: 1 });

    for (const { id } of [first, second]) {
      noSecret(`carol's ${id}`, JSON.stringify((await store.readStream(`conversation-${id}`)).map((e) => e.data)));
      expect((await parley.call('GET', `/api/v1/conversations/${id}/verify`)).body.ok).toBe(true);
    }
    expect(await memories.list({ owner: 'carol' }, { limit: 10 })).toEqual([]);
    // Bob's conversation and memory are untouched.
    expect(JSON.stringify((await store.readStream(`conversation-${other.id}`)).map((e) => e.data))).toContain(
      'PLUMTREE',
    );
    expect(await memories.list({ owner: 'bob' }, { limit: 10 })).toHaveLength(1);
    // Idempotent: the subject again erases the same conversations and finds no memory.
    expect((await parley.call('POST', '/api/v1/subjects/carol/erase', {})).body).toEqual({
      subject: 'carol',
      conversations: 2,
      memories: 0,
    });
  }, 120_000);
  // Last: after it the server under test still holds the old key, as a server not yet restarted would.
  it('re-wraps the data keys on `parley catalog rotate-key`: old events read with the new key alone', async () => {
    const { id } = await fullConversation(alice);
    const oldKey = parley.config.security.encryptionKey!;
    const newKey = randomBytes(32).toString('hex');
    const rotated = await cliWith(
      { PARLEY_ENCRYPTION_KEY: newKey, PARLEY_PREVIOUS_ENCRYPTION_KEYS: oldKey },
      'catalog',
      'rotate-key',
    );
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/conversation_keys: [1-9]\d* re-wrapped/);
    const events = await cliWith({ PARLEY_ENCRYPTION_KEY: newKey }, 'events', id);
    expect(events.code).toBe(0);
    expect(events.stdout).toContain('PLUMTREE');
    expect(events.stdout).toContain('NARWHAL');
    // The old key alone opens nothing any more.
    const stale = await cliWith({ PARLEY_ENCRYPTION_KEY: oldKey }, 'events', id);
    expect(stale.code).not.toBe(0);
    expect(stale.stdout).not.toContain('PLUMTREE');
  }, 120_000);
});

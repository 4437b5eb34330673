import type { Type } from '@nestjs/common';
import { type OperationContext, type TurnReply } from '@parley/conversation';
import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { PG_POOL } from '@parley/platform';
import { DomainError } from '@parley/core';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { snapshotFixture } from '@parley/testing';
import { AckPolicy, connect, DeliverPolicy, headers, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { conversationScript, toAppend } from '@parley/testing';
import { ADMIN_KEY, startReadSideApp, type ReadSideApp } from '../testing/read-side-app';
import { deadLetterStreamName, integrationStreamName } from './integration-relay';

const calls: { handler: string; input: Record<string, unknown>; ctx: OperationContext }[] = [];
const reply = (conversationId: string): TurnReply => ({
  conversationId,
  status: 'CO',
  position: 'pg:1:1',
  done: true,
  reply: 'hi',
  usage: { inputTokens: 1, outputTokens: 1, estimatedCost: 0 },
});
async function record(handler: string, input: Record<string, unknown>, ctx: OperationContext): Promise<TurnReply> {
  calls.push({ handler, input, ctx });
  if (handler === 'SendMessageHandler' && input.content === 'busy')
    throw new DomainError('CONVERSATION_BUSY', 'A turn is running.');
  if (handler === 'SendMessageHandler' && input.content === 'database gone')
    throw new Error('Connection terminated unexpectedly');
  return reply(typeof input.conversationId === 'string' ? input.conversationId : 'new');
}
/**
 * Records what the front doors hand each command's handler; sendMessage refuses while busy, and
 * fails as `pg` does when its connection is lost.
 */
const handlers = (handler: Type) => ({
  execute: (input: Record<string, unknown>, ctx: OperationContext) => record(handler.name, input, ctx),
});

describe('NATS commands, SSE, integration events and verification', () => {
  let side: ReadSideApp;
  let nc: NatsConnection;
  let store: EventStore;
  const id = randomUUID();

  const command = async (method: string, payload: unknown, key = ADMIN_KEY) => {
    const h = headers();
    h.set('authorization', `Bearer ${key}`);
    const msg = await nc.request(
      `${side.config.prefix}.cmd.${method}`,
      new TextEncoder().encode(JSON.stringify(payload)),
      {
        headers: h,
        timeout: 5000,
      },
    );
    return JSON.parse(new TextDecoder().decode(msg.data));
  };

  beforeAll(async () => {
    side = await startReadSideApp('front_doors', handlers);
    nc = await connect({ servers: '127.0.0.1:4222' });
    store = side.app.get(EVENT_STORE);
    await store.append(streamIdOf(id), toAppend(conversationScript(id, { snapshot: snapshotFixture() }).slice(0, 10)));
  });
  afterAll(async () => {
    await nc.close();
    await side.close();
  });

  it("hands every command on its subject to the command's handler, with commandId as the idempotency key", async () => {
    const started = await command('startConversation', {
      agentCode: 'HELPDESK',
      actionCode: 'ANSWER',
      commandId: 'k1',
    });
    expect(started.result).toMatchObject({ conversationId: 'new', status: 'CO' });
    expect(calls.at(-1)).toMatchObject({
      handler: 'StartConversationHandler',
      ctx: { caller: { subject: 'admin', roles: ['admin'] }, idempotencyKey: 'k1' },
    });
    expect(calls.at(-1)!.input).toEqual({ agentCode: 'HELPDESK', actionCode: 'ANSWER', metadata: {} });
    const base = { conversationId: id };
    const cases: [string, object, string, object][] = [
      [
        'sendMessage',
        { ...base, content: 'hi' },
        'SendMessageHandler',
        { ...base, content: 'hi', attachments: [], wait: true },
      ],
      [
        'sendMessageWithAttachments',
        {
          ...base,
          content: 'see',
          attachments: [{ mediaType: 'image/png', url: 'https://x.example/a.png' }],
          wait: false,
        },
        'SendMessageHandler',
        {
          ...base,
          content: 'see',
          attachments: [{ mediaType: 'image/png', url: 'https://x.example/a.png' }],
          wait: false,
        },
      ],
      [
        'submitAnswers',
        { ...base, answers: { why: 'late' } },
        'SubmitAnswersHandler',
        { ...base, answers: { why: 'late' }, wait: true },
      ],
      [
        'approveToolCall',
        { ...base, toolCallId: 'c1' },
        'ApproveToolCallHandler',
        { ...base, toolCallId: 'c1', wait: true },
      ],
      [
        'rejectToolCall',
        { ...base, toolCallId: 'c1', reason: 'no' },
        'RejectToolCallHandler',
        { ...base, toolCallId: 'c1', reason: 'no', wait: true },
      ],
      [
        'terminateConversation',
        { ...base, reason: 'done' },
        'TerminateConversationHandler',
        { ...base, reason: 'done' },
      ],
      ['killConversation', base, 'KillConversationHandler', base],
      ['pauseConversation', base, 'PauseConversationHandler', base],
      ['resumeConversation', base, 'ResumeConversationHandler', base],
      ['recoverConversation', base, 'RecoverConversationHandler', base],
      [
        'addToolRepository',
        { ...base, repositoryId: 'booking', options: { triggerOnce: true }, tools: ['ORDER_STATUS'] },
        'AddToolRepositoryHandler',
        { ...base, repositoryId: 'booking', options: { triggerOnce: true, exclusive: false }, tools: ['ORDER_STATUS'] },
      ],
      [
        'changeToolRepository',
        { ...base, repositoryId: 'booking', tools: ['ORDER_STATUS', 'CANCEL_ORDER'] },
        'ChangeToolRepositoryHandler',
        {
          ...base,
          repositoryId: 'booking',
          options: { triggerOnce: false, exclusive: false },
          tools: ['ORDER_STATUS', 'CANCEL_ORDER'],
        },
      ],
      [
        'removeToolRepository',
        { ...base, repositoryId: 'booking' },
        'RemoveToolRepositoryHandler',
        { ...base, repositoryId: 'booking' },
      ],
      ['clearMemory', { ...base, reason: 'fresh start' }, 'ClearMemoryHandler', { ...base, reason: 'fresh start' }],
    ];
    for (const [subject, payload, handler, input] of cases) {
      const answer = await command(subject, { ...payload, commandId: `${subject}-1` });
      expect(answer.result).toMatchObject({ conversationId: id });
      expect(calls.at(-1)).toMatchObject({ handler, ctx: { idempotencyKey: `${subject}-1` } });
      expect([subject, calls.at(-1)!.input]).toEqual([subject, input]);
    }
  });

  it('hands a command the same input over HTTP, the ids from the path, and refuses bad ids as NATS does', async () => {
    const count = calls.length;
    const post = (conversationId: string, payload: object) =>
      side.app.inject({
        method: 'POST',
        url: `/api/v1/conversations/${conversationId}/tool-calls/c1/reject`,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'idempotency-key': 'http-1' },
        payload,
      });

    const answered = await post(id, { reason: 'no' });

    expect(answered.statusCode).toBe(200);
    expect(calls.at(-1)).toMatchObject({ handler: 'RejectToolCallHandler', ctx: { idempotencyKey: 'http-1' } });
    expect(calls.at(-1)!.input).toEqual({ conversationId: id, toolCallId: 'c1', reason: 'no', wait: true });
    const twice = await post(id, { conversationId: id, reason: 'no' });
    expect([twice.statusCode, twice.json().error.details.problems]).toEqual([
      400,
      [expect.objectContaining({ path: 'conversationId' })],
    ]);
    const malformed = await post('not-a-uuid', { reason: 'no' });
    const overNats = await command('rejectToolCall', { conversationId: 'not-a-uuid', toolCallId: 'c1', reason: 'no' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual(overNats);
    expect(overNats.error.details.problems).toEqual([expect.objectContaining({ path: 'conversationId' })]);
    expect(calls.length).toBe(count + 1);
  });

  it('answers domain errors and invalid commands with the API error shape', async () => {
    const count = calls.length;
    expect(await command('sendMessage', { conversationId: id, content: 'busy' })).toEqual({
      error: { code: 'CONVERSATION_BUSY', message: 'A turn is running.' },
    });
    const invalid = await command('sendMessageWithAttachments', { conversationId: id, content: 'x', attachments: [] });
    expect(invalid.error.code).toBe('VALIDATION_FAILED');
    expect((await command('sendMessage', { conversationId: id, content: ' ' })).error.code).toBe('VALIDATION_FAILED');
    expect((await command('sendMessage', { content: 'no id' })).error.code).toBe('VALIDATION_FAILED');
    expect(calls.length).toBe(count + 1);
  });

  it('answers a dependency that cannot be reached with SERVICE_UNAVAILABLE naming it, as HTTP does', async () => {
    expect(await command('sendMessage', { conversationId: id, content: 'database gone' })).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'PostgreSQL is unavailable; try again shortly.',
        details: { dependency: 'postgres', retryAfterSeconds: 5 },
      },
    });
  });

  it('streams stored events and live deltas over SSE, resuming after Last-Event-ID', async () => {
    const live = side.app.get<LiveDeltas>(LIVE_DELTAS);
    await side.app.listen(0, '127.0.0.1');
    const { port } = side.app.getHttpServer().address() as { port: number };
    const address = `http://127.0.0.1:${port}`;
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        `${address}/api/v1/conversations/${id}/stream`,
        { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'last-event-id': '6' } },
        (res) => {
          expect(res.headers['content-type']).toContain('text/event-stream');
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += String(chunk);
            if (body.includes('id: 9\n') && !body.includes('event: delta'))
              live.publish(id, { turnNo: 1, callNo: 2, attempt: 1, text: 'It ' });
            if (body.includes('event: delta') && !body.includes('id: 10\n'))
              void store.append(
                streamIdOf(id),
                toAppend(conversationScript(id, { snapshot: snapshotFixture() }).slice(10, 11)),
              );
            if (body.includes('id: 10\n')) {
              req.destroy();
              resolve(body);
            }
          });
        },
      );
      req.on('error', (err) => (String(err).includes('socket hang up') ? undefined : reject(err)));
      req.end();
    });
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual([7, 8, 9, 10]);
    expect(text).toContain('event: ToolCallCompleted\n');
    expect(text).toMatch(/event: delta\ndata: \{"turnNo":1,"callNo":2,"attempt":1,"text":"It "\}/);
    expect(text.indexOf('event: delta')).toBeLessThan(text.indexOf('id: 10\n'));
  });

  it('publishes every event to JetStream in order, with the event id as message id', async () => {
    const events = await store.readStream(streamIdOf(id));
    const jsm = await nc.jetstreamManager();
    const stream = integrationStreamName(side.config.prefix);
    const deadline = Date.now() + 5000;
    while ((await jsm.streams.info(stream)).state.messages < events.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const consumer = await jsm.consumers.add(stream, {
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const messages = await (
      await nc.jetstream().consumers.get(stream, consumer.name)
    ).fetch({ max_messages: 100, expires: 1000 });
    const seen: { subject: string; msgId: string; revision: number }[] = [];
    for await (const m of messages) {
      seen.push({
        subject: m.subject,
        msgId: m.headers?.get('Nats-Msg-Id') ?? '',
        revision: m.json<{ revision: number }>().revision,
      });
      m.ack();
      if (seen.length === events.length) break;
    }
    expect(seen).toEqual(
      events.map((e) => ({
        subject: `${side.config.prefix}.evt.${e.type}.${id}`,
        msgId: e.eventId,
        revision: Number(e.revision),
      })),
    );
    await jsm.streams.delete(stream);
    await jsm.streams.delete(deadLetterStreamName(side.config.prefix));
  });

  it('verification names the first revision changed behind the store, and the state folds to a revision', async () => {
    const http = (url: string) =>
      side.app
        .getHttpAdapter()
        .getInstance()
        .inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect((await http(`/api/v1/conversations/${id}/verify`)).json()).toMatchObject({
      ok: true,
      firstBadRevision: null,
    });
    const state = (await http(`/api/v1/conversations/${id}/state?atRevision=3`)).json();
    expect(state).toMatchObject({ revision: 3, state: { status: 'RU', transcript: [{ sequence: 1 }] } });
    const events = (await http(`/api/v1/conversations/${id}/events?fromRevision=2&limit=2`)).json();
    expect(events.map((e: { revision: number; type: string }) => [e.revision, e.type])).toEqual([
      [2, 'AttachmentRecorded'],
      [3, 'TurnStarted'],
    ]);
    const feed = (await http('/api/v1/events?limit=3')).json();
    expect(feed.events).toHaveLength(3);
    await side.app
      .get<import('pg').Pool>(PG_POOL)
      .query(
        `update es_events set data = jsonb_set(data, '{content}', '"Where is order 43?"') where stream_id = $1 and revision = 1`,
        [streamIdOf(id)],
      );
    expect((await http(`/api/v1/conversations/${id}/verify`)).json()).toMatchObject({ ok: false, firstBadRevision: 1 });
  });
});

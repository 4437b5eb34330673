import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { connect, type NatsConnection } from 'nats';
import { toolDef, toolsTestApp, type FakeCatalog } from '../testing/tools-test-app';
import { RemoteToolInvoker } from './remote-tool.invoker';
import { invocationStreamName } from './skill-events';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('RemoteToolInvoker against a real NATS JetStream', () => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  let app: INestApplicationContext;
  let catalog: FakeCatalog;
  let invoker: RemoteToolInvoker;
  let nats: NatsConnection;
  const turnDeadline = () => Date.now() + 60_000;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ app, catalog } = await toolsTestApp({ natsUrl: NATS_URL, env: { PARLEY_PREFIX: prefix } }));
    invoker = app.get(RemoteToolInvoker);
    nats = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    await (await nats.jetstreamManager()).streams.delete(invocationStreamName(prefix)).catch(() => undefined);
    await nats.close();
    await app.close();
  });

  const messagesOn = async (subject: string) => {
    const jsm = await nats.jetstreamManager();
    const info = await jsm.streams.info(invocationStreamName(prefix), { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  };

  it('publishes the SkillInvocationEvent to JetStream once per call, however often it is sent', async () => {
    const subject = `weather-${randomUUID().slice(0, 8)}.forecast`;
    catalog.tools.set('WEATHER', {
      kind: 'remote',
      subject,
      timeoutMs: 5_000,
      schema: [{ parameter: 'unit', type: 'string', ignore: true, value: 'C' }],
    });
    const def = toolDef({ name: 'weather', kind: 'remote', ref: 'WEATHER', parameters: schema });
    const ctx = { conversationId: 'c-1', toolCallId: 'call_1', turnDeadline: turnDeadline() };
    const before = Date.now();
    const first = await invoker.invoke(def, '{"city":"Oslo","unit":"F"}', ctx);
    const again = await invoker.invoke(def, '{"city":"Oslo","unit":"F"}', ctx);
    expect(first).toMatchObject({ ok: true, subject });
    expect(again.ok && first.ok && again.correlationId).toBe(first.ok && first.correlationId);
    expect(await messagesOn(subject)).toBe(1);
    if (!first.ok) return;
    expect(Date.parse(first.deadline) - before).toBeGreaterThanOrEqual(5_000);
    expect(Date.parse(first.deadline) - before).toBeLessThan(6_000);

    const consumer = await nats.jetstream().consumers.get(invocationStreamName(prefix));
    const message = await consumer.next({ expires: 2_000 });
    expect(message?.json()).toEqual({
      correlationId: first.correlationId,
      skillName: 'WEATHER',
      arguments: { city: 'Oslo', unit: 'C' },
      replyTo: `${prefix}.tool-replies.c-1`,
      conversationId: 'c-1',
      toolCallId: 'call_1',
      deadline: first.deadline,
    });
  });

  it('leaves a subject an operator’s stream holds in that stream', async () => {
    const subject = `billing-${randomUUID().slice(0, 8)}.charge`;
    const stream = `OPS_${randomUUID().slice(0, 8).toUpperCase()}`;
    const jsm = await nats.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [subject] });
    try {
      catalog.tools.set('CHARGE', { kind: 'remote', subject, schema: [] });
      const def = toolDef({ name: 'charge', kind: 'remote', ref: 'CHARGE' });
      const sent = await invoker.invoke(def, '{}', {
        conversationId: 'c-4',
        toolCallId: 't',
        turnDeadline: turnDeadline(),
      });
      expect(sent).toMatchObject({ ok: true, subject });
      expect((await jsm.streams.info(stream)).state.messages).toBe(1);
      expect((await jsm.streams.info(invocationStreamName(prefix))).config.subjects).not.toContain(subject);
    } finally {
      await jsm.streams.delete(stream);
    }
  });

  it('never sets a deadline past the turn’s', async () => {
    catalog.tools.set('SLOW', { kind: 'remote', subject: `slow-${randomUUID().slice(0, 8)}.x`, schema: [] });
    const def = toolDef({ name: 'slow', kind: 'remote', ref: 'SLOW' });
    const end = Date.now() + 1_234;
    const sent = await invoker.invoke(def, '{}', { conversationId: 'c-2', toolCallId: 't', turnDeadline: end });
    expect(sent.ok && Date.parse(sent.deadline)).toBe(end);
  });

  it('refuses bad arguments and Parley’s own subjects before publishing anything', async () => {
    const subject = `weather-${randomUUID().slice(0, 8)}.forecast`;
    catalog.tools.set('W2', { kind: 'remote', subject, schema: [] });
    const def = toolDef({ name: 'w2', kind: 'remote', ref: 'W2', parameters: schema });
    const ctx = { conversationId: 'c-3', toolCallId: 't', turnDeadline: turnDeadline() };
    expect(await invoker.invoke(def, '{"city":5}', ctx)).toMatchObject({
      ok: false,
      outcome: { error: { code: 'INVALID_ARGUMENTS' } },
    });
    for (const own of [`${prefix}.live.x`, '_INBOX.x']) {
      catalog.tools.set('OWN', { kind: 'remote', subject: own, schema: [] });
      const sent = await invoker.invoke(toolDef({ name: 'own', kind: 'remote', ref: 'OWN' }), '{}', ctx);
      expect([own, sent]).toMatchObject([own, { ok: false, outcome: { error: { code: 'NOT_ALLOWED' } } }]);
    }
    catalog.tools.set('EMIT', { kind: 'emitter', emitter: 'x.y', schema: [] });
    const wrongKind = await invoker.invoke(toolDef({ name: 'emit', kind: 'remote', ref: 'EMIT' }), '{}', ctx);
    expect(wrongKind).toMatchObject({ ok: false, outcome: { error: { code: 'UNAVAILABLE' } } });
  });
});

describe('RemoteToolInvoker with NATS off', () => {
  it('fails the call as UNAVAILABLE', async () => {
    Logger.overrideLogger(['error']);
    const { app, catalog } = await toolsTestApp({ natsUrl: null });
    catalog.tools.set('W', { kind: 'remote', subject: 'weather.forecast', schema: [] });
    const sent = await app.get(RemoteToolInvoker).invoke(toolDef({ name: 'w', kind: 'remote', ref: 'W' }), '{}', {
      conversationId: 'c',
      toolCallId: 't',
      turnDeadline: Date.now() + 1_000,
    });
    expect(sent).toMatchObject({ ok: false, outcome: { error: { code: 'UNAVAILABLE' } } });
    await app.close();
  });
});

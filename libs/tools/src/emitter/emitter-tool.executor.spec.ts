import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { connect, type NatsConnection } from 'nats';
import { callContext, toolDef, toolsTestApp, type FakeCatalog } from '../testing/tools-test-app';
import { ToolExecutor } from '../tool-executor';
import { freePort } from '@parley/testing';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const schema = { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] };

describe('Emitter tools against a real NATS server', () => {
  let app: INestApplicationContext;
  let catalog: FakeCatalog;
  let executor: ToolExecutor;
  let listener: NatsConnection;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ app, catalog } = await toolsTestApp({ natsUrl: NATS_URL }));
    executor = app.get(ToolExecutor);
    listener = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await listener.close();
    await app.close();
  });

  it('publishes the tool-matching event to <resource>.<scope> and carries the flags', async () => {
    const subject = `appointments-${randomUUID()}.request`;
    catalog.tools.set('APPT', {
      kind: 'emitter',
      emitter: subject,
      schema: [
        { parameter: 'day', type: 'string', ignore: false },
        { parameter: 'clinic', type: 'string', ignore: true, value: 'north' },
      ],
    });
    const received = listener.subscribe(subject, { max: 1 });
    await listener.flush();
    const def = toolDef({
      name: 'request-for-appointment',
      kind: 'emitter',
      ref: 'APPT',
      parameters: schema,
      returnDirect: true,
      skipResponse: true,
    });

    const outcome = await executor.execute(
      def,
      '{"day":"friday","clinic":"south"}',
      callContext({ repositoryId: 'r-9' }),
    );

    expect(outcome).toMatchObject({ ok: true, returnDirect: true, skipResponse: true });
    expect(outcome.ok && outcome.output).toBe(`Event 'request-for-appointment' was sent to ${subject}.`);
    for await (const message of received) {
      expect(message.json()).toEqual({
        appId: 'SUPPORT',
        sessionId: 'c-1',
        repositoryId: 'r-9',
        source: 'agent',
        name: 'request-for-appointment',
        schema: [
          { parameter: 'day', type: 'string', ignore: false },
          { parameter: 'clinic', type: 'string', ignore: true, value: 'north' },
        ],
        values: { day: 'friday', clinic: 'north' },
      });
    }
    expect(received.getProcessed()).toBe(1);
  });
});

describe("Emitter tools and Parley's own subjects", () => {
  it('refuse <prefix>.* and _INBOX subjects as NOT_ALLOWED, publishing nothing', async () => {
    Logger.overrideLogger(['error']);
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const { app, catalog } = await toolsTestApp({ natsUrl: NATS_URL, env: { PARLEY_PREFIX: prefix } });
    const listener = await connect({ servers: NATS_URL });
    const seen: string[] = [];
    listener.subscribe(`${prefix}.live.>`, { callback: (_err, msg) => seen.push(msg.subject) });
    listener.subscribe('_INBOX_app.>', { callback: (_err, msg) => seen.push(msg.subject) });
    await listener.flush();
    for (const subject of [`${prefix}.live.${randomUUID()}`, `${prefix}.evt.ConversationStarted`, '_INBOX_app.x']) {
      catalog.tools.set('APPT', { kind: 'emitter', emitter: subject, schema: [] });
      const def = toolDef({ name: 'appt', kind: 'emitter', ref: 'APPT' });
      const outcome = await app.get(ToolExecutor).execute(def, '{}', callContext());
      expect([subject, outcome]).toMatchObject([subject, { ok: false, error: { code: 'NOT_ALLOWED' } }]);
    }
    await listener.flush();
    expect(seen).toEqual([]);
    await listener.close();
    await app.close();
  });
});

describe('Emitter tools with NATS off', () => {
  it('fail as UNAVAILABLE', async () => {
    Logger.overrideLogger(['error']);
    const { app, catalog } = await toolsTestApp({ natsUrl: null });
    catalog.tools.set('APPT', { kind: 'emitter', emitter: 'appointments.request', schema: [] });
    const def = toolDef({ name: 'appt', kind: 'emitter', ref: 'APPT' });
    const outcome = await app.get(ToolExecutor).execute(def, '{}', callContext());
    expect(outcome).toMatchObject({ ok: false, error: { code: 'UNAVAILABLE' } });
    expect(!outcome.ok && outcome.error.message).toMatch(/NATS\) is off/);
    await app.close();
  });
});

describe('Emitter tools while NATS has not answered since the start', () => {
  it('fail as UNAVAILABLE, saying so', async () => {
    Logger.overrideLogger(['error']);
    const url = `nats://127.0.0.1:${await freePort()}`;
    const { app, catalog } = await toolsTestApp({ natsUrl: url });
    catalog.tools.set('APPT', { kind: 'emitter', emitter: 'appointments.request', schema: [] });
    const def = toolDef({ name: 'appt', kind: 'emitter', ref: 'APPT' });
    const outcome = await app.get(ToolExecutor).execute(def, '{}', callContext());
    expect(outcome).toMatchObject({ ok: false, error: { code: 'UNAVAILABLE' } });
    expect(!outcome.ok && outcome.error.message).toBe(
      `The event for tool 'appt' could not be published: NATS at ${url} has not answered since Parley started.`,
    );
    await app.close();
  });
});

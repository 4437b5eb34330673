import type { Type } from '@nestjs/common';
import type { TurnReply } from '@parley/conversation';
import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { NATS_LINK, type NatsLink } from '@parley/platform';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { conversationScript, freePort, killProcess, snapshotFixture, startNatsServer, toAppend } from '@parley/testing';
import {
  connect,
  headers,
  nkeyAuthenticator,
  nkeys,
  type ConnectionOptions,
  type NatsConnection,
  type NatsError,
  type Status,
} from 'nats';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_KEY, startReadSideApp, type ReadSideApp } from '../testing/read-side-app';

/** The configuration shipped for operators, used as it is. */
const SHIPPED_CONF = resolve(__dirname, '../../../../deploy/nats/nats-server.conf');

const encoder = new TextEncoder();
const decoder = new TextDecoder();
// A letter first: nats-server reads an environment variable as a configuration value, where a
// leading digit makes a number.
const password = () => `pw${randomBytes(12).toString('hex')}`;

const reply = (conversationId: string): TurnReply => ({
  conversationId,
  status: 'CO',
  position: 'pg:1:1',
  done: true,
  reply: 'hi',
  usage: { inputTokens: 1, outputTokens: 1, estimatedCost: 0 },
});
const handlers = (_handler: Type) => ({
  execute: (input: Record<string, unknown>) =>
    reply(typeof input.conversationId === 'string' ? input.conversationId : 'new'),
});

/** The NATS errors a connection reports (a refused publish is reported this way, not thrown). */
function errorsOf(nc: NatsConnection): Status[] {
  const seen: Status[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') seen.push(s);
  })();
  return seen;
}

/** Polls until `seen` has `n` entries or a second has passed; the server reports a refused publish asynchronously. */
async function atLeast<T>(seen: T[], n: number): Promise<T[]> {
  const deadline = Date.now() + 1000;
  while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 50));
  return seen;
}

/** Subscribes to `subject` and resolves with the server's refusal, or null when none came within a round trip. */
async function refusedSubscription(nc: NatsConnection, subject: string, queue?: string): Promise<string | null> {
  let refusal: string | null = null;
  nc.subscribe(subject, {
    queue,
    callback: (err: NatsError | null) => {
      if (err) refusal = `${err.code}: ${err.message}`;
    },
  });
  await nc.flush();
  await nc.flush();
  return refusal;
}

const request = async (nc: NatsConnection, subject: string, payload: unknown, key = ADMIN_KEY) => {
  const h = headers();
  h.set('authorization', `Bearer ${key}`);
  const msg = await nc.request(subject, encoder.encode(JSON.stringify(payload)), { headers: h, timeout: 5000 });
  return JSON.parse(decoder.decode(msg.data));
};

describe('NATS permissions of the shipped server configuration (deploy/nats/nats-server.conf)', () => {
  const secrets = {
    PARLEY_NATS_PASSWORD: password(),
    DASHBOARD_NATS_PASSWORD: password(),
    APP_NATS_PASSWORD: password(),
    TOOLS_NATS_PASSWORD: password(),
  };
  const reports = nkeys.createUser();
  let server: ChildProcess;
  let url: string;
  let side: ReadSideApp;
  const clients: NatsConnection[] = [];
  const client = async (options: ConnectionOptions) => {
    const nc = await connect({ servers: url, ...options });
    clients.push(nc);
    return nc;
  };
  const app = () => client({ user: 'app', pass: secrets.APP_NATS_PASSWORD, inboxPrefix: '_INBOX_app' });
  const id = randomUUID();

  beforeAll(async () => {
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    server = await startNatsServer(port, ['-c', SHIPPED_CONF], {
      ...secrets,
      REPORTS_NATS_NKEY: reports.getPublicKey(),
    });
    side = await startReadSideApp('nats_permissions', handlers, {
      NATS_URL: url,
      NATS_USER: 'parley',
      NATS_PASSWORD: secrets.PARLEY_NATS_PASSWORD,
      PARLEY_PREFIX: 'parley',
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((nc) => nc.close()));
    await side.close();
    await killProcess(server);
  });

  it("serves a client user's commands and queries with Parley's own user, answering in the client's inbox", async () => {
    expect(side.app.get<NatsLink>(NATS_LINK).connection).not.toBeNull();
    const nc = await app();
    const started = await request(nc, 'parley.cmd.startConversation', { agentCode: 'HELPDESK', actionCode: 'ANSWER' });
    expect(started.result).toMatchObject({ conversationId: 'new', status: 'CO' });
    const listed = await request(nc, 'parley.qry.getAllActions', {});
    expect(listed).toHaveProperty('result');
    const rpc = await request(nc, 'parley.rpc', [
      { jsonrpc: '2.0', id: 1, method: 'getAllActions' },
      { jsonrpc: '2.0', id: 2, method: 'terminateConversation', params: { conversationId: randomUUID() } },
    ]);
    expect(rpc).toEqual([
      { jsonrpc: '2.0', id: 1, result: expect.any(Array) },
      { jsonrpc: '2.0', id: 2, result: expect.objectContaining({ status: 'CO' }) },
    ]);

    const byNkey = await client({ authenticator: nkeyAuthenticator(reports.getSeed()), inboxPrefix: '_INBOX_reports' });
    expect(await request(byNkey, 'parley.qry.getAllActions', {})).toHaveProperty('result');
    // The reports user may query but not command.
    const errors = errorsOf(byNkey);
    byNkey.publish('parley.cmd.killConversation', encoder.encode('{}'));
    byNkey.publish('parley.rpc', encoder.encode('{}'));
    await byNkey.flush();
    expect((await atLeast(errors, 2)).map((e) => e.permissionContext)).toEqual([
      { operation: 'publish', subject: 'parley.cmd.killConversation', queue: undefined },
      { operation: 'publish', subject: 'parley.rpc', queue: undefined },
    ]);
  });

  it('refuses a client user the requests (and their keys), the queue groups, the events, the live deltas and other inboxes', async () => {
    const nc = await app();
    for (const [subject, queue] of [
      ['parley.cmd.>', undefined],
      ['parley.cmd.*', 'parley.cmd'],
      ['parley.qry.*', 'parley.qry'],
      ['parley.rpc', 'parley.rpc'],
      ['parley.evt.>', undefined],
      [`parley.evt.ConversationStarted.${id}`, undefined],
      ['parley.live.>', undefined],
      [`parley.live.${id}`, undefined],
      ['_INBOX.>', undefined],
      ['_INBOX_reports.>', undefined],
      ['>', undefined],
    ] as const)
      expect([subject, await refusedSubscription(nc, subject, queue)]).toEqual([
        subject,
        expect.stringMatching(/^PERMISSIONS_VIOLATION: 'Permissions Violation for Subscription to/),
      ]);
  });

  it("refuses a client user's publish to live deltas and integration events: nothing reaches a conversation's stream", async () => {
    const live = side.app.get<LiveDeltas>(LIVE_DELTAS);
    const seen: { text?: string }[] = [];
    const stop = live.subscribe(id, (delta) => seen.push(delta));
    const nc = await app();
    const errors = errorsOf(nc);
    const forged = encoder.encode(JSON.stringify({ turnNo: 1, callNo: 1, attempt: 1, text: 'forged' }));
    nc.publish(`parley.live.${id}`, forged);
    nc.publish(`parley.evt.ConversationStarted.${id}`, forged);
    nc.publish('$JS.API.STREAM.INFO.PARLEY_EVENTS', forged);
    await nc.flush();
    // A request whose reply subject is a live-delta subject is not answered there.
    nc.publish('parley.qry.getAllActions', encoder.encode('{}'), { reply: `parley.live.${id}` });
    nc.publish('parley.cmd.startConversation', encoder.encode('{}'), { reply: `parley.evt.Forged.${id}` });
    await request(nc, 'parley.qry.getAllActions', {});
    // Parley's own deltas still arrive.
    live.publish(id, { turnNo: 1, callNo: 1, attempt: 1, text: 'real' });
    const deadline = Date.now() + 2000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(seen.map((d) => d.text)).toEqual(['real']);
    expect((await atLeast(errors, 3)).map((e) => e.permissionContext)).toEqual([
      { operation: 'publish', subject: `parley.live.${id}`, queue: undefined },
      { operation: 'publish', subject: `parley.evt.ConversationStarted.${id}`, queue: undefined },
      { operation: 'publish', subject: '$JS.API.STREAM.INFO.PARLEY_EVENTS', queue: undefined },
    ]);
  });

  it('lets the dashboard user read the integration events, live and from JetStream, and nothing else', async () => {
    const dashboard = await client({
      user: 'dashboard',
      pass: secrets.DASHBOARD_NATS_PASSWORD,
      inboxPrefix: '_INBOX_dashboard',
    });
    const live: string[] = [];
    dashboard.subscribe('parley.evt.>', { callback: (_err, msg) => live.push(msg.subject) });
    await dashboard.flush();
    const store = side.app.get<EventStore>(EVENT_STORE);
    const events = toAppend(conversationScript(id, { snapshot: snapshotFixture() }).slice(0, 3));
    await store.append(streamIdOf(id), events);
    const deadline = Date.now() + 5000;
    while (live.length < events.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(live).toEqual(events.map((e) => `parley.evt.${e.type}.${id}`));

    const consumer = await dashboard.jetstream().consumers.get('PARLEY_EVENTS');
    const first = await consumer.next({ expires: 2000 });
    expect(first?.subject).toBe(`parley.evt.${events[0]!.type}.${id}`);

    expect(await refusedSubscription(dashboard, 'parley.live.>')).toMatch(/PERMISSIONS_VIOLATION/);
    expect(await refusedSubscription(dashboard, 'parley.cmd.*', 'parley.cmd')).toMatch(/PERMISSIONS_VIOLATION/);
    const errors = errorsOf(dashboard);
    dashboard.publish(`parley.live.${id}`, encoder.encode('{}'));
    dashboard.publish('parley.cmd.startConversation', encoder.encode('{}'));
    await dashboard.flush();
    expect((await atLeast(errors, 2)).map((e) => e.permissionContext?.subject)).toEqual([
      `parley.live.${id}`,
      'parley.cmd.startConversation',
    ]);
  });

  it('lets a remote tool service read its invocations and publish completions, and nothing else', async () => {
    const parley = await client({ user: 'parley', pass: secrets.PARLEY_NATS_PASSWORD });
    const jsm = await parley.jetstreamManager();
    await jsm.streams.add({ name: 'PARLEY_REMOTE_TOOLS', subjects: ['weather.forecast'] });
    await jsm.streams.add({ name: 'PARLEY_TOOL_REPLIES', subjects: ['parley.tool-replies.>'] });
    const tools = await client({ user: 'tools', pass: secrets.TOOLS_NATS_PASSWORD });
    const toolsJsm = await tools.jetstreamManager();
    await toolsJsm.consumers.add('PARLEY_REMOTE_TOOLS', {
      durable_name: 'weather',
      filter_subject: 'weather.forecast',
    });
    await tools.jetstream().publish(`parley.tool-replies.${id}`, encoder.encode('{"correlationId":"c","result":1}'));
    // Parley reads and acknowledges it.
    const reply = await (await parley.jetstream().consumers.get('PARLEY_TOOL_REPLIES')).next({ expires: 2000 });
    expect(reply?.subject).toBe(`parley.tool-replies.${id}`);
    await reply?.ackAck();

    expect(await refusedSubscription(tools, 'parley.cmd.*', 'parley.cmd')).toMatch(/PERMISSIONS_VIOLATION/);
    expect(await refusedSubscription(tools, 'parley.evt.>')).toMatch(/PERMISSIONS_VIOLATION/);
    const errors = errorsOf(tools);
    tools.publish(`parley.live.${id}`, encoder.encode('{}'));
    tools.publish('parley.cmd.startConversation', encoder.encode('{}'));
    tools.publish('$JS.API.STREAM.INFO.PARLEY_EVENTS', encoder.encode('{}'));
    await tools.flush();
    expect((await atLeast(errors, 3)).map((e) => e.permissionContext?.subject)).toEqual([
      `parley.live.${id}`,
      'parley.cmd.startConversation',
      '$JS.API.STREAM.INFO.PARLEY_EVENTS',
    ]);
  });

  it('refuses a wrong password, and an unknown NKey', async () => {
    await expect(connect({ servers: url, user: 'app', pass: 'wrong-password' })).rejects.toMatchObject({
      code: 'AUTHORIZATION_VIOLATION',
    });
    await expect(
      connect({ servers: url, authenticator: nkeyAuthenticator(nkeys.createUser().getSeed()) }),
    ).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  });
});

describe("Parley's NATS connection by NKey seed", () => {
  it('connects as an NKey user and serves requests', async () => {
    const parley = nkeys.createUser();
    const app = password();
    // A copy of the shipped configuration whose Parley user is known by its public NKey.
    const dir = mkdtempSync(join(tmpdir(), 'parley-nats-conf-'));
    const conf = join(dir, 'nats-server.conf');
    writeFileSync(
      conf,
      readFileSync(SHIPPED_CONF, 'utf8').replace(
        '{ user: parley, password: $PARLEY_NATS_PASSWORD,',
        `{ nkey: ${parley.getPublicKey()},`,
      ),
    );
    const port = await freePort();
    const server = await startNatsServer(port, ['-c', conf], {
      DASHBOARD_NATS_PASSWORD: password(),
      APP_NATS_PASSWORD: app,
      TOOLS_NATS_PASSWORD: password(),
      REPORTS_NATS_NKEY: nkeys.createUser().getPublicKey(),
    });
    const url = `nats://127.0.0.1:${port}`;
    const side = await startReadSideApp('nats_nkey', handlers, {
      NATS_URL: url,
      NATS_NKEY_SEED: decoder.decode(parley.getSeed()),
      PARLEY_PREFIX: 'parley',
    });
    const nc = await connect({ servers: url, user: 'app', pass: app, inboxPrefix: '_INBOX_app' });
    try {
      const started = await request(nc, 'parley.cmd.startConversation', {
        agentCode: 'HELPDESK',
        actionCode: 'ANSWER',
      });
      expect(started.result).toMatchObject({ conversationId: 'new' });
    } finally {
      await nc.close();
      await side.close();
      await killProcess(server);
    }
  });
});

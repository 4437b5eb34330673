import type { Type } from '@nestjs/common';
import { streamIdOf } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { conversationScript, freePort, killProcess, snapshotFixture, startNatsServer, toAppend } from '@parley/testing';
import { AckPolicy, connect, DeliverPolicy, type JsMsg, type NatsConnection } from 'nats';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY, startReadSideApp, type ReadSideApp } from '../testing/read-side-app';
import { deadLetterStreamName, integrationStreamName } from './integration-relay';
import { IntegrationRelay } from './integration-relay.module';

const MAX_PAYLOAD = 65_536;
const handlers = (_handler: Type) => ({ execute: () => Promise.reject(new Error('no commands here')) });

/** The first `n` messages of `stream`, in order; fewer when they do not come within 5 s. */
async function readStream(nc: NatsConnection, stream: string, n: number): Promise<JsMsg[]> {
  const jsm = await nc.jetstreamManager();
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const info = await jsm.streams.info(stream).catch(() => null);
    if (info && info.state.messages >= n) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const consumer = await jsm.consumers.add(stream, { ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
  const messages = await (
    await nc.jetstream().consumers.get(stream, consumer.name)
  ).fetch({
    max_messages: n,
    expires: 1000,
  });
  const seen: JsMsg[] = [];
  for await (const m of messages) {
    seen.push(m);
    if (seen.length === n) break;
  }
  return seen;
}

describe('the integration relay against a NATS whose max_payload is 64 KiB', () => {
  let server: ChildProcess;
  let url: string;
  let nc: NatsConnection;
  const apps: ReadSideApp[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-nats-conf-'));
    writeFileSync(join(dir, 'small.conf'), `max_payload: ${MAX_PAYLOAD}\n`);
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    server = await startNatsServer(port, ['-c', join(dir, 'small.conf')]);
    nc = await connect({ servers: url });
  });
  afterAll(async () => {
    await nc.close();
    for (const side of apps) await side.close();
    await killProcess(server);
  });

  const start = async (label: string, prefix: string) => {
    const side = await startReadSideApp(label, handlers, { NATS_URL: url, PARLEY_PREFIX: prefix });
    apps.push(side);
    return side;
  };
  /** Five events of a new conversation, the second with a 100 KB message: over max_payload, under EVENT_MAX_BYTES. */
  const append = async (side: ReadSideApp) => {
    const id = randomUUID();
    const events = toAppend(conversationScript(id, { snapshot: snapshotFixture() }).slice(0, 5));
    events[1] = { ...events[1]!, data: { ...(events[1]!.data as object), content: 'x'.repeat(100_000) } };
    await side.app.get<EventStore>(EVENT_STORE).append(streamIdOf(id), events);
    return { id, events };
  };

  it('publishes an event over max_payload trimmed, with where to read it over HTTP, and the events after it whole', async () => {
    const side = await start('relay_trim', `t${randomBytes(5).toString('hex')}`);
    const { id, events } = await append(side);
    const seen = await readStream(nc, integrationStreamName(side.config.prefix), events.length);
    expect(seen.map((m) => [m.subject, m.headers?.get('Nats-Msg-Id')])).toEqual(
      events.map((e) => [`${side.config.prefix}.evt.${e.type}.${id}`, e.eventId]),
    );
    const bodies = seen.map((m) => m.json<{ revision: number; data: unknown; trimmed?: { href: string } }>());
    expect(bodies.map((b) => b.trimmed !== undefined)).toEqual([false, true, false, false, false]);
    expect(bodies[2]!.data).not.toBeNull();
    const trimmed = bodies[1]!;
    expect(trimmed).toMatchObject({
      streamId: streamIdOf(id),
      revision: 1,
      eventId: events[1]!.eventId,
      type: events[1]!.type,
      data: null,
      trimmed: { reason: 'max_payload', bytes: expect.any(Number) },
    });
    expect(seen[1]!.data.length).toBeLessThan(2048);

    const whole = await side.app.inject({
      method: 'GET',
      url: trimmed.trimmed!.href,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const [event] = whole.json<{ eventId: string; data: { content: string } }[]>();
    expect(event!.eventId).toBe(events[1]!.eventId);
    expect(event!.data.content).toHaveLength(100_000);
  });

  it('dead-letters what JetStream refuses for its size even trimmed, and goes on with the events after it', async () => {
    const prefix = `t${randomBytes(5).toString('hex')}`;
    // A stream set up by an operator with a message size limit that no event fits.
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: integrationStreamName(prefix), subjects: [`${prefix}.evt.>`], max_msg_size: 64 });
    const side = await start('relay_dlq', prefix);
    const { id, events } = await append(side);
    const letters = await readStream(nc, deadLetterStreamName(prefix), events.length);
    expect(letters.map((m) => [m.subject, m.headers?.get('Nats-Msg-Id')])).toEqual(
      events.map((e) => [`${prefix}.dlq.evt.${e.type}.${id}`, e.eventId]),
    );
    expect(letters[1]!.json()).toMatchObject({
      reason: 'too_large',
      bytes: expect.any(Number),
      event: { eventId: events[1]!.eventId, revision: 1, data: null, trimmed: { href: expect.any(String) } },
    });
    const relay = side.app.get(IntegrationRelay);
    const last = (await side.app.get<EventStore>(EVENT_STORE).readStream(streamIdOf(id))).at(-1)!;
    const deadline = Date.now() + 5000;
    while (relay.position !== last.position && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(relay.position).toBe(last.position);
  });
});

import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, NatsRecordBuilder, Transport, type ClientProxy } from '@nestjs/microservices';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { connect, headers, type NatsConnection } from 'nats';
import { firstValueFrom } from 'rxjs';
import { ConsumerModule } from '../examples/nestjs-consumer/consumer.module';
import { Outbox } from '../examples/nestjs-consumer/conversation-events.controller';
import { JetStreamEvents } from '../examples/nestjs-consumer/jetstream-events.strategy';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * A NestJS service talking to Parley as NestJS services do: a real ClientProxy over
 * Transport.NATS sends `{pattern, data, id}` to `<prefix>.cmd.*` / `<prefix>.qry.*`, the
 * credential in a NATS header, and gets the result, or Parley's error body as the error.
 */
describe('NestJS microservice clients (ClientProxy, Transport.NATS)', () => {
  let parley: ParleyUnderTest;
  let client: ClientProxy;
  let anonymous: ClientProxy;
  let nc: NatsConnection;
  let store: EventStore;
  let prefix: string;

  const proxy = (options: { headers?: Record<string, string> }) =>
    ClientProxyFactory.create({
      transport: Transport.NATS,
      options: { servers: [parley.config.nats.url!], ...options },
    });

  beforeAll(async () => {
    parley = await startParley('nestjs_clients_e2e');
    prefix = parley.config.prefix;
    store = parley.app.get(EVENT_STORE);
    client = proxy({ headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    anonymous = proxy({});
    nc = await connect({ servers: parley.config.nats.url! });
  });
  afterAll(async () => {
    await client?.close();
    await anonymous?.close();
    await nc?.close();
    await parley?.close();
  });

  const eventCount = async (id: string) => (await store.readStream(`conversation-${id}`).catch(() => [])).length;

  it('runs a command and a query, and answers a plain request in its own shape still', async () => {
    parley.simulator.script([{ when: { lastUserMessage: /invoice 42/ }, reply: { text: 'Invoice 42 is paid.' } }]);
    const started = await firstValueFrom(
      client.send(`${prefix}.cmd.startConversation`, {
        agentCode: 'HELPDESK',
        actionCode: 'CHAT',
        commandId: 'nest-1',
      }),
    );
    expect(started).toMatchObject({ conversationId: expect.any(String), status: 'NS' });
    const id = started.conversationId as string;
    const sent = await firstValueFrom(
      client.send(`${prefix}.cmd.sendMessage`, { conversationId: id, content: 'Is invoice 42 paid?' }),
    );
    expect(sent).toMatchObject({ conversationId: id, status: 'CO', reply: 'Invoice 42 is paid.' });

    const found = await firstValueFrom(
      client.send(`${prefix}.qry.findConversation`, { conversationId: id, minPosition: sent.position }),
    );
    expect(found).toMatchObject({ conversationUuid: id, llmProcessStatus: 'CO' });
    const missing = await firstValueFrom(
      client.send(`${prefix}.qry.findConversation`, { conversationId: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(missing).toBeNull();

    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    const plain = await nc.request(`${prefix}.qry.findConversation`, JSON.stringify({ conversationId: id }), {
      headers: h,
      timeout: 10_000,
    });
    expect(plain.json()).toEqual({ result: expect.objectContaining({ conversationUuid: id }) });
  }, 30_000);

  it("raises Parley's error body as the Observable's error, and bad input appends nothing", async () => {
    const started = await firstValueFrom(
      client.send(`${prefix}.cmd.startConversation`, { agentCode: 'HELPDESK', actionCode: 'CHAT' }),
    );
    const id = started.conversationId as string;
    const before = await eventCount(id);

    await expect(
      firstValueFrom(client.send(`${prefix}.cmd.sendMessage`, { conversationId: id, content: '' })),
    ).rejects.toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: expect.any(String),
        details: { problems: [expect.objectContaining({ path: 'content' })] },
      },
    });
    await expect(
      firstValueFrom(client.send(`${prefix}.cmd.sendMessage`, { conversationId: id, content: 'hi', extra: 1 })),
    ).rejects.toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    await expect(
      firstValueFrom(client.send(`${prefix}.cmd.noSuchCommand`, { conversationId: id })),
    ).rejects.toMatchObject({ error: { code: 'NOT_FOUND', details: { subject: `${prefix}.cmd.noSuchCommand` } } });
    await expect(
      firstValueFrom(client.send(`${prefix}.cmd.terminateConversation`, { conversationId: id, reason: 7 })),
    ).rejects.toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    await expect(
      firstValueFrom(anonymous.send(`${prefix}.cmd.terminateConversation`, { conversationId: id })),
    ).rejects.toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
    expect(await eventCount(id)).toBe(before);
  });

  it('refuses a packet over NATS_MAX_PAYLOAD_BYTES in NestJS’s shape, and runs none of it', async () => {
    const limited = await startParley('nestjs_clients_limit_e2e', { NATS_MAX_PAYLOAD_BYTES: '1024' });
    const small = ClientProxyFactory.create({
      transport: Transport.NATS,
      options: { servers: [limited.config.nats.url!], headers: { authorization: `Bearer ${ADMIN_KEY}` } },
    });
    try {
      const id = '00000000-0000-4000-8000-0000000000aa';
      const start = {
        agentCode: 'HELPDESK',
        actionCode: 'CHAT',
        conversationId: id,
        metadata: { note: 'x'.repeat(2000) },
      };
      await expect(firstValueFrom(small.send(`${limited.config.prefix}.cmd.startConversation`, start))).rejects.toEqual(
        {
          error: expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE' }),
        },
      );
      const store = limited.app.get<EventStore>(EVENT_STORE);
      expect(await store.readStream(`conversation-${id}`).catch(() => [])).toEqual([]);
    } finally {
      await small.close();
      await limited.close();
    }
  }, 30_000);

  it('takes the credential of one request from a NatsRecordBuilder header', async () => {
    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    const record = new NatsRecordBuilder({}).setHeaders(h).build();
    const actions = await firstValueFrom(anonymous.send(`${prefix}.qry.getAllActions`, record));
    expect(Array.isArray(actions)).toBe(true);
    expect(actions.length).toBeGreaterThan(0);
  });

  it('feeds the integration events to the example’s @EventPattern handlers from a durable JetStream consumer', async () => {
    parley.simulator.script([{ when: { lastUserMessage: /crate 9/ }, reply: { text: 'Crate 9 ships Monday.' } }]);
    const started = await firstValueFrom(
      client.send(`${prefix}.cmd.startConversation`, { agentCode: 'HELPDESK', actionCode: 'CHAT' }),
    );
    const id = started.conversationId as string;
    await firstValueFrom(
      client.send(`${prefix}.cmd.sendMessage`, { conversationId: id, content: 'When does crate 9 ship?' }),
    );

    // Started after the events were published: the durable consumer reads them from the stream.
    const consumer = await NestFactory.createMicroservice(ConsumerModule, {
      strategy: new JetStreamEvents({ connection: { servers: parley.config.nats.url! }, prefix, durable: 'example' }),
      logger: false,
    });
    await consumer.listen();
    try {
      const outbox = consumer.get(Outbox);
      const repliesOf = () => outbox.replies.filter((r) => r.conversationId === id);
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && repliesOf().length === 0;)
        await new Promise((r) => setTimeout(r, 50));
      expect(outbox.started).toContain(id);
      expect(repliesOf()).toEqual([{ conversationId: id, text: 'Crate 9 ships Monday.', eventId: expect.any(String) }]);
    } finally {
      await consumer.close();
    }
  }, 30_000);
});

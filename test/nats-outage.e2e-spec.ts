import { freePort, killProcess, startNatsServer, until } from '@parley/testing';
import { integrationStreamName } from '@parley/transport';
import { connect, headers, type NatsConnection } from 'nats';
import type { ChildProcess } from 'node:child_process';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * NATS going away under a running Parley, on a NATS server of the test's own (the machine's
 * shared one is never touched): HTTP goes on, readiness says what is down, and once NATS is back
 * (restarted with an empty JetStream store, the worst case) the NATS front door answers again and
 * the integration events recorded meanwhile are published; and a Parley started while NATS is
 * away, which takes it up once it answers.
 */
describe('NATS outage', () => {
  let parley: ParleyUnderTest;
  let nats: ChildProcess;
  let port: number;

  const startNats = async () => {
    nats = await startNatsServer(port);
  };

  beforeAll(async () => {
    port = await freePort();
    await startNats();
    parley = await startParley('nats_outage', { NATS_URL: `nats://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await parley?.close();
    await killProcess(nats);
  });

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;

  /** A client service's own connection, asking the NATS front door for the actions. */
  const askActions = async (): Promise<unknown> => {
    const client: NatsConnection = await connect({ servers: `nats://127.0.0.1:${port}` });
    try {
      const h = headers();
      h.set('authorization', `Bearer ${ADMIN_KEY}`);
      const msg = await client.request(`${parley.config.prefix}.qry.getAllActions`, '{}', {
        headers: h,
        timeout: 1000,
      });
      return JSON.parse(msg.string());
    } finally {
      await client.close();
    }
  };

  /** The types of the integration events JetStream holds for `conversationId`. */
  const integrationEvents = async (conversationId: string): Promise<string[]> => {
    const client = await connect({ servers: `nats://127.0.0.1:${port}` });
    try {
      const jsm = await client.jetstreamManager();
      const stream = integrationStreamName(parley.config.prefix);
      const { state } = await jsm.streams.info(stream);
      const types: string[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const msg = await jsm.streams.getMessage(stream, { seq });
        if (msg.subject.endsWith(`.${conversationId}`)) types.push(msg.subject.split('.').at(-2)!);
      }
      return types;
    } finally {
      await client.close();
    }
  };

  /**
   * Once NATS answers again: readiness 200, the NATS front door answering, and the integration
   * events of `conversationId`'s turn published.
   */
  const caughtUp = async (conversationId: string): Promise<void> => {
    await until(async () => (await parley.call('GET', '/health/ready')).status === 200, 15_000, 200);
    await until(
      async () =>
        askActions().then(
          () => true,
          () => false,
        ),
      15_000,
      200,
    );
    await until(
      async () => (await integrationEvents(conversationId).catch((): string[] => [])).includes('ConversationCompleted'),
      20_000,
      200,
    );
    expect(await integrationEvents(conversationId)).toEqual(
      expect.arrayContaining(['ConversationStarted', 'MessageRecorded', 'TurnStarted', 'ConversationCompleted']),
    );
  };

  /** Follows GET …/stream until a frame of `until` arrives; resolves the frames' event names. */
  const followUntil = (conversationId: string, until: string): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`no ${until} on the stream`)), 15_000);
      void fetch(`${parley.url}/api/v1/conversations/${conversationId}/stream`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        signal: abort.signal,
      })
        .then(async (res) => {
          let body = '';
          for await (const chunk of res.body!) {
            body += Buffer.from(chunk).toString();
            if (body.includes(`event: ${until}\n`)) break;
          }
          return [...body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
        })
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          abort.abort();
        });
    });

  it('keeps running turns over HTTP while NATS is down, and catches up when it is back', async () => {
    const before = await start();
    expect(
      (await parley.call('POST', `/api/v1/conversations/${before}/messages`, { content: 'one' })).body.status,
    ).toBe('CO');
    await until(async () => (await integrationEvents(before)).includes('ConversationCompleted'), 10_000, 100);
    expect(await askActions()).toMatchObject({ result: expect.any(Array) });

    await killProcess(nats);
    // A readiness answer serves for a second: the one after it sees NATS down.
    let ready = await parley.call('GET', '/health/ready');
    for (const deadline = Date.now() + 5000; ready.status === 200 && Date.now() < deadline;)
      ready = await parley.call('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { checks: { postgres: 'ok', redis: 'ok', nats: 'down' } },
    });
    // What needs no NATS goes on: a whole turn over HTTP, followed on the SSE stream (its stored
    // events come from the event store; only the live deltas travel over NATS).
    const during = await start();
    const followed = followUntil(during, 'ConversationCompleted');
    const reply = await parley.call('POST', `/api/v1/conversations/${during}/messages`, { content: 'two' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: two' });
    expect(await followed).toEqual(expect.arrayContaining(['MessageRecorded', 'TurnStarted', 'ConversationCompleted']));

    await startNats();
    // The front door's subscriptions come back with the connection, and the relay publishes what
    // was recorded during the outage, into a stream it creates again.
    await caughtUp(during);
  }, 90_000);

  it('starts while NATS cannot be reached, runs turns over HTTP, and takes NATS up once it answers', async () => {
    await parley.close();
    await killProcess(nats);
    port = await freePort();
    parley = await startParley('nats_absent', { NATS_URL: `nats://127.0.0.1:${port}` });

    const ready = await parley.call('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error.details.checks).toEqual({ postgres: 'ok', redis: 'ok', nats: 'down' });
    const before = await start();
    const followed = followUntil(before, 'ConversationCompleted');
    const reply = await parley.call('POST', `/api/v1/conversations/${before}/messages`, { content: 'early' });
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: early' });
    expect(await followed).toEqual(expect.arrayContaining(['TurnStarted', 'ConversationCompleted']));

    await startNats();
    // The front door subscribes, and the relay publishes from its checkpoint what was recorded
    // before NATS first answered.
    await caughtUp(before);
  }, 90_000);
});

import { createTestDatabase, startTcpProxy, type TcpProxy, type TestDatabase, until } from '@parley/testing';
import { afterOutage, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * PostgreSQL going away under a running Parley: the server's connections go through a proxy the
 * test cuts (as a failed network would) and restores; the database itself runs on.
 */
describe('PostgreSQL unreachable', () => {
  let parley: ParleyUnderTest;
  let proxy: TcpProxy;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('pg_outage');
    const target = new URL(db.url);
    proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
    target.port = String(proxy.port);
    parley = await startParley('pg_outage_unused', { DATABASE_URL: target.toString() });
  });
  afterAll(async () => {
    proxy.restore();
    await parley.close();
    await proxy.close();
    await db.drop();
  });

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;

  it('answers 503 naming PostgreSQL while it cannot be reached, commands and queries alike, and serves again once it can', async () => {
    const id = await start();
    proxy.cut();
    try {
      const calls = [
        await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'while down' }),
        await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }),
        await parley.call('GET', `/api/v1/conversations/${id}`),
      ];
      for (const call of calls) {
        expect(call.status).toBe(503);
        expect(call.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dependency: 'postgres' } });
        expect(call.headers.get('retry-after')).toBe('5');
      }
    } finally {
      proxy.restore();
    }

    const reply = await afterOutage(() =>
      parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'back' }),
    );
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: back' });
    // The refused message left nothing behind.
    const events = (await parley.call('GET', `/api/v1/conversations/${id}/events`)).body as { data: any }[];
    expect(events.map((e) => e.data.content).filter(Boolean)).toEqual(['back', 'You said: back']);
    // The read models' subscription lost its connection (and its lock) too: it takes them again
    // and projects the turn made after the outage.
    await until(
      async () => (await parley.call('GET', `/api/v1/conversations/${id}`)).body.llmProcessStatus === 'CO',
      15_000,
      100,
    );
    const messages = await parley.call('GET', `/api/v1/conversations/${id}/messages`);
    expect(messages.body.map((m: { llmMessageContent: string }) => m.llmMessageContent)).toEqual([
      'back',
      'You said: back',
    ]);
  }, 30_000);

  it('finishes a turn the database went away under, and answers the command waiting for it', async () => {
    const id = await start();
    parley.simulator.setLatency(100);
    try {
      const sending = parley.call('POST', `/api/v1/conversations/${id}/messages`, {
        content: 'in flight',
        timeoutMs: 20_000,
      });
      await until(() => parley.simulator.openRequests > 0, 5_000, 5);
      proxy.cut();
      setTimeout(() => proxy.restore(), 1_500);
      const reply = await sending;

      // Recorded before the outage, finished after it: the command is answered, not failed.
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: in flight' });
    } finally {
      parley.simulator.setLatency(0);
      proxy.restore();
    }
    const types = ((await parley.call('GET', `/api/v1/conversations/${id}/events`)).body as { type: string }[]).map(
      (e) => e.type,
    );
    expect(types.filter((t) => t === 'TurnStarted')).toHaveLength(1);
    expect(types.filter((t) => t === 'ConversationCompleted')).toHaveLength(1);
  }, 40_000);
});

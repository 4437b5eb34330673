import { until } from '@parley/testing';
import { integrationStreamName, ProjectorThread } from '@parley/transport';
import { connect } from 'nats';
import { startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * The all-in-one server with its projector on a worker thread (PROJECTOR_THREAD, as `npm start`
 * runs it with a DATABASE_URL): the read models, the read-your-writes wait, the projection lag
 * in /api/v1/status and /metrics, and the integration relay all work as on the main thread, and
 * the thread stops with the server.
 */
describe('the projector thread of the all-in-one server', () => {
  let parley: ParleyUnderTest;
  beforeAll(async () => {
    // Polling alone would leave the read models up to SUBSCRIPTION_POLL_MS behind: at 10 s, only
    // the wake-up the main thread sends after each append brings them up to date at once.
    // The polls below must not spend the admin's rate limit: a slow projection is then a slow
    // projection, not 429s for every request after it.
    parley = await startParley('projector_thread', {
      PROJECTOR_THREAD: 'true',
      SUBSCRIPTION_POLL_MS: '10000',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
  });
  afterAll(() => parley?.close());

  const turn = async () => {
    const started = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    const id = started.body.conversationId as string;
    const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'Hello', wait: true });
    expect([sent.status, sent.body.status]).toEqual([200, 'CO']);
    return { id, position: sent.body.position as string };
  };

  it('starts the projector thread with the server', () => {
    expect(parley.app.get(ProjectorThread).running).toBe(true);
  });

  it('projects a turn: a query that waits for its position sees it completed', async () => {
    const { id, position } = await turn();
    const read = await parley.call('GET', `/api/v1/conversations/${id}?minPosition=${encodeURIComponent(position)}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ conversationUuid: id, llmProcessStatus: 'CO', turnNo: 1 });
    const messages = await parley.call(
      'GET',
      `/api/v1/conversations/${id}/messages?minPosition=${encodeURIComponent(position)}`,
    );
    expect(messages.body.map((m: { llmMessageContent: string }) => m.llmMessageContent)).toEqual([
      'Hello',
      'You said: Hello',
    ]);
  });

  it("wakes on the main thread's appends: each turn is in the read models long before the next poll", async () => {
    // Without the wake-up, each would wait for a poll at a random point of its 10 s.
    for (let i = 0; i < 3; i++) {
      const { id } = await turn();
      const started = Date.now();
      const completed = async () =>
        (await parley.call('GET', `/api/v1/conversations/${id}`)).body.llmProcessStatus === 'CO';
      await until(completed, 10_000, 25).catch(async (err: Error) => {
        // What the server knew when the read model did not catch up, for whoever reads the failure.
        const status = await parley.call('GET', '/api/v1/status');
        throw new Error(`${err.message}; turn ${i + 1}, /api/v1/status: ${JSON.stringify(status.body)}`);
      });
      expect(Date.now() - started).toBeLessThan(3000);
    }
  }, 60_000);

  it('reports the projection lag to the server status and its metrics', async () => {
    await turn();
    await until(async () => {
      const status = await parley.call('GET', '/api/v1/status');
      return typeof status.body.projectionLagMs.conversations === 'number';
    }, 5000);
    const metrics = await fetch(`${parley.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/projection_lag_ms\{projection="messages"\} \d+/);
  });

  it('relays the integration events to JetStream from the thread', async () => {
    const { id } = await turn();
    const client = await connect({ servers: 'nats://127.0.0.1:4222' });
    try {
      const jsm = await client.jetstreamManager();
      const stream = integrationStreamName(parley.config.prefix);
      await until(async () => {
        const { state } = await jsm.streams
          .info(stream)
          .catch(() => ({ state: { messages: 0, first_seq: 0, last_seq: -1 } }));
        for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++)
          if ((await jsm.streams.getMessage(stream, { seq })).subject.endsWith(`.${id}`)) return true;
        return false;
      }, 10_000);
    } finally {
      await client.close();
    }
  });

  it('stops the thread with the server', async () => {
    const thread = parley.app.get(ProjectorThread);
    await parley.close();
    expect(thread.running).toBe(false);
    parley = undefined as unknown as ParleyUnderTest;
  });
});

import { ConversationRepository } from '@parley/conversation';
import { decide } from '@parley/domain';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { connectedRedis } from '@parley/platform';
import { freePort, killProcess, startRedisServer, until } from '@parley/testing';
import type { ChildProcess } from 'node:child_process';
import { afterOutage, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * The turn queue's faults, on a Redis server of the test's own (stopped and started again; the
 * machine's shared one is never touched): a command refused cleanly while Redis is down, and a
 * turn whose enqueue was lost stored again by the dispatcher and run.
 */
describe('turn queue faults: Redis down, and a lost enqueue', () => {
  let parley: ParleyUnderTest;
  let redis: ChildProcess;
  let port: number;
  let store: EventStore;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedisServer(port);
    parley = await startParley('queue_faults', { REDIS_URL: `redis://127.0.0.1:${port}` }, (url) => {
      const bundle = testCatalog(url) as any;
      const answer = bundle.actions.find((a: { code: string }) => a.code === 'ANSWER');
      bundle.configurations.push({ ...bundle.configurations[0], code: 'LONG', questionTimeoutMs: 4000 });
      bundle.actions.push({ ...answer, code: 'ASK_LONG', llmConfiguration: 'LONG' });
      bundle.configurations[0].questionTimeoutMs = 1000;
      return bundle;
    });
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(async () => {
    await parley.close();
    await killProcess(redis);
  });

  // After a test that stopped Redis, its connections may still be waiting to reconnect.
  beforeEach(() => until(async () => (await parley.call('GET', '/health/ready')).status === 200, 10_000, 100));

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
  const eventsOf = async (id: string) => store.readStream(`conversation-${id}`);

  it('refuses a message with 503 while Redis is down, records nothing, and takes messages again once it is back', async () => {
    const id = await start();
    expect((await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'one' })).body.status).toBe(
      'CO',
    );
    const before = (await eventsOf(id)).length;

    await killProcess(redis);
    try {
      const refused = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'two' });

      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dependency: 'redis' } });
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await eventsOf(id)).toHaveLength(before);
      // What needs only PostgreSQL still answers.
      expect((await parley.call('GET', `/api/v1/conversations/${id}/events`)).status).toBe(200);
    } finally {
      redis = await startRedisServer(port);
    }

    const reply = await afterOutage(() =>
      parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'three' }),
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: three' });
  }, 30_000);

  it('answers a message whose turn job Redis refused to store: the command is recorded, so it is not an error', async () => {
    const id = await start();
    const redisClient = await connectedRedis(`redis://127.0.0.1:${port}`);
    // BullMQ's set of delayed jobs made the wrong type: Redis is up (the turn slot is taken) but
    // refuses the turn job's lease with WRONGTYPE.
    const delayed = `${parley.config.prefix}:turns:delayed`;
    await redisClient.set(delayed, 'not a sorted set');
    try {
      const reply = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'refused job' });

      // The turn ran in this process anyway; before, the command failed with 500 INTERNAL here.
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ status: 'CO', reply: 'You said: refused job' });
    } finally {
      await redisClient.del(delayed);
      await redisClient.quit();
    }
  }, 30_000);

  it('runs a turn whose command was recorded but never enqueued (the process died between the two)', async () => {
    const id = await start();
    const repository = parley.app.get(ConversationRepository);
    const loaded = await repository.load(id);
    const now = new Date().toISOString();
    const events = decide(
      {
        type: 'SendMessage',
        data: { content: 'lost', tokenCount: 1, attachments: [] },
        meta: { now, actor: loaded.state.status === 'none' ? 'nobody' : loaded.state.owner },
      },
      loaded.state,
    );
    expect(events.map((e) => e.type)).toContain('TurnStarted');
    // The command's append, without the enqueue that follows it.
    await repository.append(id, loaded, events, { occurredAt: now, actor: 'svc-test' });

    await until(async () => (await eventsOf(id)).some((e) => e.type === 'ConversationCompleted'), 10_000, 100);
    const assistant = (await eventsOf(id)).filter((e) => e.type === 'MessageRecorded').at(-1)!;
    expect(assistant.data).toMatchObject({ role: 'AS', content: 'You said: lost' });
  }, 30_000);

  /**
   * Asks a question while `fault` holds (set once the model streams it, so the question's timer is
   * the first write after it), checks the conversation waits and does not expire while it holds,
   * then lifts it with `recover`: the question must expire with QUESTION_TIMEOUT after that.
   */
  const expiresAfter = async (fault: () => Promise<void>, recover: () => Promise<void>) => {
    parley.simulator.script([
      {
        reply: {
          toolCalls: [{ name: 'AskUserQuestion', arguments: { questions: [{ key: 'k', question: 'Which one?' }] } }],
        },
      },
    ]);
    parley.simulator.setLatency(100);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ANSWER' }))
      .body.conversationId as string;
    try {
      const asking = parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'help' });
      await until(() => parley.simulator.openRequests > 0, 5_000, 5);
      await fault();
      const asked = await asking;

      expect(asked.body.status).toBe('WA');
      await new Promise((r) => setTimeout(r, 1500));
      expect((await eventsOf(id)).some((e) => e.type === 'ConversationFailed')).toBe(false);
    } finally {
      parley.simulator.setLatency(0);
      await recover();
    }

    await until(async () => (await eventsOf(id)).some((e) => e.type === 'ConversationFailed'), 10_000, 100);
    const failed = (await eventsOf(id)).find((e) => e.type === 'ConversationFailed')!;
    expect(failed.data).toMatchObject({ code: 'QUESTION_TIMEOUT' });
  };

  it("expires a question asked while Redis was down: its timer waits in the queue's connection until Redis is back", async () => {
    await expiresAfter(
      () => killProcess(redis),
      async () => void (redis = await startRedisServer(port)),
    );
  }, 30_000);

  it('expires a question whose timer a restarted Redis lost with all its data: the dispatcher notices and stores it again', async () => {
    parley.simulator.script([
      {
        reply: {
          toolCalls: [{ name: 'AskUserQuestion', arguments: { questions: [{ key: 'k', question: 'Which one?' }] } }],
        },
      },
    ]);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ASK_LONG' }))
      .body.conversationId as string;
    expect((await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'help' })).body.status).toBe(
      'WA',
    );
    // Past the dispatcher's own look at the question (about a second after it), which found its timer stored.
    await new Promise((r) => setTimeout(r, 1500));
    await killProcess(redis);
    redis = await startRedisServer(port); // nothing kept on disk: the timer is gone

    await until(async () => (await eventsOf(id)).some((e) => e.type === 'ConversationFailed'), 15_000, 100);
    const failed = (await eventsOf(id)).find((e) => e.type === 'ConversationFailed')!;
    expect(failed.data).toMatchObject({ code: 'QUESTION_TIMEOUT' });
  }, 30_000);

  it('expires a question whose timer Redis refused (out of memory): the turn dispatcher stores it once Redis takes writes again', async () => {
    const admin = await connectedRedis(`redis://127.0.0.1:${port}`);
    // Every write is refused at once while Redis is over its memory limit.
    await expiresAfter(
      async () => void (await admin.config('SET', 'maxmemory', '1')),
      async () => {
        await admin.config('SET', 'maxmemory', '0');
        await admin.quit();
      },
    );
  }, 30_000);
});

import { ProviderCredentials } from '@parley/catalog';
import { TIMER_QUEUE } from '@parley/conversation';
import { JOB_QUEUE, type JobQueue } from '@parley/platform';
import { until } from '@parley/testing';
import { startCommandApi, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

describe('timers: question expiry and the stuck watchdog', () => {
  let parley: ParleyUnderTest;
  beforeAll(async () => {
    parley = await startParley(
      'timers',
      { STUCK_AFTER_MS: '1000', LLM_CALL_TIMEOUT_MS: '20000', LLM_BREAKER_FAILURES: '100' },
      (url) => {
        const bundle = testCatalog(url) as any;
        bundle.configurations[0].questionTimeoutMs = 1000;
        return bundle;
      },
    );
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string) =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode })).body
      .conversationId as string;
  const statusOf = async (id: string) => {
    const events = (await parley.call('GET', `/api/v1/conversations/${id}/events`)).body as {
      type: string;
      data: any;
    }[];
    return events;
  };

  it('stores no stuck watchdog for a turn that ends within a second', async () => {
    parley.simulator.script([{ reply: { text: 'Quick.' } }]);
    const timers = () => parley.app.get<JobQueue>(JOB_QUEUE).depth(TIMER_QUEUE);
    const before = await timers();
    const id = await start('CHAT');
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello' });
    expect(res.body.status).toBe('CO');
    expect(await timers()).toBe(before);
  });

  it('stores the watchdog at once when a run fails, so a turn whose every retry fails fast is still marked stuck', async () => {
    parley.simulator.script([{ reply: { text: 'Never sent.' } }]);
    const credentials = parley.app.get(ProviderCredentials) as { endpointFor: ProviderCredentials['endpointFor'] };
    const endpointFor = credentials.endpointFor;
    // The catalog cannot be read: every run of the turn throws at once and is retried.
    credentials.endpointFor = () => Promise.reject(new Error('the catalog database is unreachable'));
    try {
      const id = await start('CHAT');
      const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hi', wait: false });
      expect(sent.status).toBe(202);
      await until(async () => (await statusOf(id)).some((e) => e.type === 'ConversationStuck'), 8000, 100);
      expect(parley.simulator.requests).toHaveLength(0);
    } finally {
      credentials.endpointFor = endpointFor;
    }
  });

  it('fails a conversation whose question is not answered in time with QUESTION_TIMEOUT', async () => {
    parley.simulator.script([
      {
        reply: {
          toolCalls: [{ name: 'AskUserQuestion', arguments: { questions: [{ key: 'k', question: 'Which one?' }] } }],
        },
      },
    ]);
    const id = await start('ANSWER');
    const asked = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'help' });
    expect(asked.body.status).toBe('WA');
    await until(async () => (await statusOf(id)).some((e) => e.type === 'ConversationFailed'), 8000, 100);
    const failed = (await statusOf(id)).find((e) => e.type === 'ConversationFailed')!;
    expect(failed.data).toMatchObject({ code: 'QUESTION_TIMEOUT' });
    const late = await parley.call('POST', `/api/v1/conversations/${id}/answers`, { answers: { k: 'this' } });
    expect(late.body.error.code).toBe('CONVERSATION_NOT_WAITING');
  });

  it('answers a command waiting in another instance when the watchdog marks its turn stuck, not at its next read of the stream', async () => {
    // A command API without the worker that would read the stream only every minute.
    const config = { ...parley.config, turn: { ...parley.config.turn, waitPollMs: 60_000 } };
    const front = await startCommandApi(config);
    const via = front.call;
    try {
      parley.simulator.script([{ times: 1, reply: { text: 'First.' } }, { reply: { hang: true } }]);
      const id = await start('CHAT');
      // The first waiting command opens the front's subscription to announcements.
      expect((await via('POST', `/api/v1/conversations/${id}/messages`, { content: 'one' })).body.status).toBe('CO');

      const started = Date.now();
      const reply = await via('POST', `/api/v1/conversations/${id}/messages`, { content: 'two', timeoutMs: 20_000 });

      expect(reply.status).toBe(200);
      expect(reply.body.status).toBe('ST');
      // Stuck after about 2 s (stored after 1 s, due 1 s later); unannounced, it would answer 20 s on.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await front.close();
    }
  }, 40_000);

  it('marks a turn without progress as stuck, and an administrator recovers it', async () => {
    parley.simulator.script([{ times: 1, reply: { hang: true } }, { reply: { text: 'Recovered.' } }]);
    const id = await start('CHAT');
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello', wait: false });
    await until(async () => (await statusOf(id)).some((e) => e.type === 'ConversationStuck'), 8000, 100);
    const busy = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'still there?' });
    expect(busy.body.error.code).toBe('CONVERSATION_PAUSED');
    const recovered = await parley.call('POST', `/api/v1/conversations/${id}/recover`, {});
    expect([200, 202]).toContain(recovered.status);
    await until(async () => (await statusOf(id)).some((e) => e.type === 'ConversationCompleted'), 8000, 100);
    const types = (await statusOf(id)).map((e) => e.type);
    expect(types.indexOf('TurnResumed')).toBeGreaterThan(types.indexOf('ConversationStuck'));
  });
});

import { ConversationRepository } from '@parley/conversation';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { startCommandApi, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * Two instances on one database and one queue, as in a scaled deployment: `worker` runs the
 * turns, `front` only takes commands. Each keeps the conversation states it folded last, so
 * `front`'s kept state falls behind whatever `worker` appends — and must never be acted on.
 */
describe('two instances: a kept conversation state is never acted on stale', () => {
  let worker: ParleyUnderTest;
  let front: Awaited<ReturnType<typeof startCommandApi>>;
  let store: EventStore;

  beforeAll(async () => {
    worker = await startParley('two_instances');
    front = await startCommandApi(worker.config);
    store = worker.app.get(EVENT_STORE);
  });
  afterAll(async () => {
    await front.close();
    await worker.close();
  });

  const viaFront = (path: string, body: unknown) => front.call('POST', path, body);

  it("accepts a message its own kept state would refuse, once a fresh load shows the other instance's turn ended", async () => {
    const id = (await viaFront('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    const first = await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'one', wait: false });
    expect(first.status).toBe(202);
    const ended = async () =>
      (await store.readStream(`conversation-${id}`)).some((e) => e.type === 'ConversationCompleted');
    for (const deadline = Date.now() + 10_000; !(await ended());) {
      if (Date.now() > deadline) throw new Error('the turn did not end');
      await new Promise((r) => setTimeout(r, 20));
    }
    // The worker instance completed the turn; the front instance, which did not wait, still keeps it running.
    const kept = await front.app.get(ConversationRepository).loadForWrite(id);
    expect(kept).toMatchObject({ fresh: false, state: { status: 'RU' } });

    const second = await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'two', wait: true });

    expect(second.status).toBe(200);
    expect(second.body.status).toBe('CO');
    const events = await store.readStream(`conversation-${id}`);
    const users = events.filter((e) => e.type === 'MessageRecorded' && (e.data as any).role === 'US');
    expect(users.map((e) => (e.data as any).content)).toEqual(['one', 'two']);
    expect(events.filter((e) => e.type === 'ConversationCompleted')).toHaveLength(2);
    expect(events.map((e) => Number(e.revision))).toEqual(events.map((_, i) => i));
  });

  it('appends on a kept state another instance moved past only after re-deciding on a fresh one', async () => {
    const id = (await worker.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'one', wait: true });
    // A turn through the worker instance moves the stream on without the front instance seeing it.
    expect((await worker.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'two' })).body.status).toBe(
      'CO',
    );

    const third = await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'three', wait: true });

    expect(third.body.status).toBe('CO');
    const events = await store.readStream(`conversation-${id}`);
    const users = events.filter((e) => e.type === 'MessageRecorded' && (e.data as any).role === 'US');
    expect(users.map((e) => [(e.data as any).content, (e.data as any).sequence])).toEqual([
      ['one', 1],
      ['two', 3],
      ['three', 5],
    ]);
  });

  it('keeps what its waiting command read of a turn run elsewhere, so the next command starts from it', async () => {
    const id = (await viaFront('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
    expect((await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'one', wait: true })).body.status).toBe(
      'CO',
    );
    const head = (await store.readStream(`conversation-${id}`)).at(-1)!.revision;

    const kept = await front.app.get(ConversationRepository).loadForWrite(id);

    expect(kept).toMatchObject({ fresh: false, revision: head, state: { status: 'CO' } });
  });

  it("answers a waiting command when the worker instance announces the turn's end, not at its next read of the stream", async () => {
    // This front would read the stream only every minute; the announcement must wake it.
    const config = { ...worker.config, turn: { ...worker.config.turn, waitPollMs: 60_000 } };
    const patient = await startCommandApi(config);
    const via = patient.call;
    try {
      const id = (await via('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
        .conversationId as string;
      // The first waiting command opens the front's subscription; it may lose that race.
      await via('POST', `/api/v1/conversations/${id}/messages`, { content: 'one', timeoutMs: 5_000 });

      const started = Date.now();
      const reply = await via('POST', `/api/v1/conversations/${id}/messages`, { content: 'two', timeoutMs: 20_000 });

      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ status: 'CO', reply: expect.any(String) });
      // Without the announcement it would have answered at its timeout, 20 s on.
      expect(Date.now() - started).toBeLessThan(10_000);
      const events = await store.readStream(`conversation-${id}`);
      expect(events.filter((e) => e.type === 'ConversationCompleted')).toHaveLength(2);
    } finally {
      await patient.close();
    }
  }, 40_000);

  it('stops a turn running on the worker instance within a second of a kill taken by the other one', async () => {
    worker.simulator.setLatency(200);
    worker.simulator.script([
      { reply: { text: 'a very slow reply that would take many seconds to finish streaming' } },
    ]);
    try {
      const id = (await viaFront('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
        .conversationId as string;
      expect((await viaFront(`/api/v1/conversations/${id}/messages`, { content: 'go', wait: false })).status).toBe(202);
      await new Promise((r) => setTimeout(r, 300));
      expect(worker.simulator.openRequests).toBe(1);

      const killedAt = Date.now();
      expect((await viaFront(`/api/v1/conversations/${id}/kill`, { reason: 'runaway' })).body.status).toBe('KI');
      while (worker.simulator.openRequests > 0 && Date.now() < killedAt + 1000)
        await new Promise((r) => setTimeout(r, 20));

      expect(worker.simulator.openRequests).toBe(0);
      await new Promise((r) => setTimeout(r, 300));
      expect((await store.readStream(`conversation-${id}`)).at(-1)!.type).toBe('ConversationKilled');
    } finally {
      worker.simulator.setLatency(0);
    }
  });
});

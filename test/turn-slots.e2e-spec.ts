import { REDIS, type Redis } from '@parley/platform';
import { until } from '@parley/testing';
import { startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * A running-turn slot (MAX_RUNNING_TURNS_PER_SUBJECT) goes back when its turn is killed: the
 * turn's own state still says running when the kill stops it, so the slot used to stay held
 * until its lease ran out, and a client killing a few turns was refused every new one.
 */
describe('running-turn slots of killed turns', () => {
  let parley: ParleyUnderTest;
  let redis: Redis;
  beforeAll(async () => {
    parley = await startParley('turn_slots', { MAX_RUNNING_TURNS_PER_SUBJECT: '1' });
    redis = parley.app.get<Redis>(REDIS);
  });
  afterAll(() => parley?.close());

  const heldSlots = async () => {
    let held = 0;
    for (const key of await redis.keys(`${parley.config.prefix}:turn-slots:*`)) held += await redis.zcard(key);
    return held;
  };
  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;

  it('gives the slot back when a running turn is killed, so the next turn starts', async () => {
    parley.simulator.script([
      { when: { lastUserMessage: /hold on/ }, reply: { text: 'Thinking it over', stallAfterChunks: 2 } },
      { reply: { text: 'Hello again.' } },
    ]);
    for (let round = 0; round < 3; round++) {
      const id = await start();
      const sent = await parley.call('POST', `/api/v1/conversations/${id}/messages`, {
        content: 'hold on',
        wait: false,
      });
      expect(sent.status).toBe(202);
      await until(async () => parley.simulator.requests.length > round, 10_000);
      const killed = await parley.call('POST', `/api/v1/conversations/${id}/kill`, { reason: 'test' });
      expect(killed.status).toBe(200);
      await until(async () => (await heldSlots()) === 0, 10_000);
    }
    const next = await start();
    const res = await parley.call('POST', `/api/v1/conversations/${next}/messages`, { content: 'hello' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CO', reply: 'Hello again.' });
    expect(await heldSlots()).toBe(0);
  });
});

import { startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * The embedded database gives Parley a pool of one connection. Every background reader must
 * then leave that connection free while it waits on the pool: the turn dispatcher, which wakes
 * about a second after a turn starts, once held it in its checkpoint's transaction while it read
 * the conversation through the pool, and every request behind it hung.
 */
describe('Parley on a pool of one database connection', () => {
  let parley: ParleyUnderTest;
  beforeAll(async () => {
    parley = await startParley('one_connection', { DATABASE_POOL_SIZE: '1' }, undefined, undefined, { latencyMs: 40 });
  });
  afterAll(() => parley.close());

  it('runs turns that outlast the dispatcher’s wake-up to their end, one after another', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    parley.simulator.script([{ reply: { text } }]);
    const start = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    expect(start.status).toBe(201);
    const id = start.body.conversationId as string;

    for (const content of ['first', 'second']) {
      const began = Date.now();
      const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content, timeoutMs: 15_000 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'CO', reply: text });
      // Long enough that the dispatcher looked at the turn while it ran.
      expect(Date.now() - began).toBeGreaterThan(1_200);
    }
    const read = await parley.call('GET', `/api/v1/conversations/${id}`);
    expect(read.status).toBe(200);
  }, 60_000);
});

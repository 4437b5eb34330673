import { PG_POOL } from '@parley/platform';
import { until } from '@parley/testing';
import type { Pool, PoolClient } from 'pg';
import { startParley, type ParleyUnderTest } from './support/parley-app';

describe('a Parley under load: a saturated pool and long waits', () => {
  let parley: ParleyUnderTest;
  beforeAll(async () => {
    parley = await startParley('request_limits', {
      DATABASE_POOL_SIZE: '4',
      DATABASE_ACQUIRE_TIMEOUT_MS: '300',
      MAX_WAIT_MS: '500',
    });
  });
  afterAll(() => parley?.close());

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;

  const statusOf = async (id: string) =>
    (await parley.call('GET', `/api/v1/conversations/${id}`)).body?.llmProcessStatus as string | undefined;

  it('answers 202 once MAX_WAIT_MS has passed, however long the caller asked to wait, and the turn goes on', async () => {
    const id = await start();
    // A first turn warms the app up (catalog snapshot, connections), so the second one times the wait alone.
    await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'hello' });
    await until(async () => (await statusOf(id)) === 'CO', 15_000, 100);
    parley.simulator.script([{ reply: { text: 'ok' } }]);
    parley.simulator.setLatency(1000);
    try {
      const began = Date.now();
      const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, {
        content: 'take your time',
        timeoutMs: 20_000,
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ conversationId: id, status: 'RU' });
      expect(Date.now() - began).toBeLessThan(1500);
      await until(async () => (await statusOf(id)) === 'CO', 30_000, 100);
    } finally {
      parley.simulator.setLatency(0);
    }
  });

  it('answers many requests 503 SERVICE_UNAVAILABLE while every database connection is busy, and serves again after', async () => {
    const id = await start();
    const pool = parley.app.get<Pool>(PG_POOL);
    // Slow requests elsewhere hold every connection of the pool that is free.
    const held: PoolClient[] = [];
    for (;;) {
      const client = await pool.connect().catch(() => null);
      if (!client) break;
      held.push(client);
    }
    try {
      expect(held.length).toBeGreaterThan(0);
      const began = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => parley.call('GET', `/api/v1/conversations/${id}/events`)),
      );
      expect(Date.now() - began).toBeLessThan(5000);
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(503));
      expect(answers[0].body.error).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: { dependency: 'postgres', retryAfterSeconds: 5 },
      });
      expect(answers[0].headers.get('retry-after')).toBe('5');
    } finally {
      for (const client of held) client.release();
    }
    const after = await parley.call('GET', `/api/v1/conversations/${id}/events`);
    expect(after.status).toBe(200);
    parley.simulator.script([{ reply: { text: 'back' } }]);
    const turn = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'still there?' });
    expect(turn.body).toMatchObject({ status: 'CO', reply: 'back' });
  });
});

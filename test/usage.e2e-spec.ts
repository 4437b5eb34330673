import { EVENT_STORE } from '@parley/event-store';
import { PG_POOL } from '@parley/platform';
import { PROJECTIONS, rebuildProjections } from '@parley/read-models';
import type { Pool } from 'pg';
import { startParley, type ParleyUnderTest } from './support/parley-app';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** PostgreSQL's percentile_cont: linear interpolation between the closest ranks. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

/** Test catalog prices: 0.000001 per input token, 0.000002 per output token. */
const cost = (input: number, output: number) => input * 0.000001 + output * 0.000002;

describe('usage per subject: a client sees its own, admins and auditors everyone’s', () => {
  let parley: ParleyUnderTest;
  let alice: string;
  let bob: string;
  let auditor: string;
  let aliceConversation: string;
  let bobConversation: string;
  let last: string;

  const usage = async (query: string, key?: string) =>
    parley.call(
      'GET',
      `/api/v1/usage?${query}&minPosition=${encodeURIComponent(last)}`,
      undefined,
      key ? bearer(key) : {},
    );
  const latencies = async (conversationId: string) =>
    (
      (await parley.call('GET', `/api/v1/conversations/${conversationId}/model-calls?minPosition=${last}`)).body as {
        status: string;
        latencyMs: number | null;
      }[]
    )
      .filter((c) => c.status === 'completed')
      .map((c) => c.latencyMs as number);

  beforeAll(async () => {
    parley = await startParley('usage_per_subject');
    const key = async (subject: string, roles: string[]) =>
      (await parley.call('POST', '/api/v1/keys', { subject, roles })).body.key as string;
    alice = await key('alice', ['client']);
    bob = await key('bob', ['client']);
    auditor = await key('audit-1', ['auditor']);
    parley.simulator.setLatency(3);
    parley.simulator.script([
      { when: { lastUserMessage: /^alice/ }, reply: { text: 'Hello Alice.', tokens: { prompt: 100, completion: 10 } } },
      // Bob's first turn: one overloaded attempt, retried, then an answer.
      { when: { lastUserMessage: /^bob/ }, reply: { fail: { status: 503 } }, times: 1 },
      { when: { lastUserMessage: /^bob/ }, reply: { text: 'Hello Bob.', tokens: { prompt: 30, completion: 5 } } },
      // Bob's second turn fails: a bad request is not retried.
      { when: { lastUserMessage: /^boom/ }, reply: { fail: { status: 400 } } },
    ]);
    const start = async (key: string) =>
      (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, bearer(key)))
        .body.conversationId as string;
    const send = async (key: string, id: string, content: string) => {
      const turn = await parley.call(
        'POST',
        `/api/v1/conversations/${id}/messages`,
        { content, timeoutMs: 10_000 },
        bearer(key),
      );
      last = turn.body.position as string;
      return turn.body as { status: string };
    };
    aliceConversation = await start(alice);
    expect(await send(alice, aliceConversation, 'alice one')).toMatchObject({ status: 'CO' });
    expect(await send(alice, aliceConversation, 'alice two')).toMatchObject({ status: 'CO' });
    bobConversation = await start(bob);
    expect(await send(bob, bobConversation, 'bob one')).toMatchObject({ status: 'CO' });
    expect(await send(bob, bobConversation, 'boom')).toMatchObject({ status: 'FA' });
  });
  afterAll(() => parley?.close());

  it('gives each client only its own usage, with turns, errors and latency percentiles', async () => {
    const aliceLatency = await latencies(aliceConversation);
    expect(aliceLatency).toHaveLength(2);
    const mine = await usage('groupBy=subject', alice);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([
      {
        subject: 'alice',
        conversations: 1,
        turns: 2,
        errors: 0,
        modelCalls: 2,
        inputTokens: 200,
        outputTokens: 20,
        estimatedCost: expect.closeTo(2 * cost(100, 10), 12),
        embeddingTokens: 0,
        embeddingCost: 0,
        latencyP50Ms: expect.closeTo(percentile(aliceLatency, 0.5), 6),
        latencyP95Ms: expect.closeTo(percentile(aliceLatency, 0.95), 6),
      },
    ]);
    const bobLatency = await latencies(bobConversation);
    expect(bobLatency).toHaveLength(1);
    const his = await usage('groupBy=action', bob);
    // Two turns, one failed; errors: the failed turn, its failed model call and the retried attempt.
    expect(his.body).toEqual([
      {
        action: 'CHAT',
        conversations: 1,
        turns: 2,
        errors: 3,
        modelCalls: 1,
        inputTokens: 30,
        outputTokens: 5,
        estimatedCost: expect.closeTo(cost(30, 5), 12),
        embeddingTokens: 0,
        embeddingCost: 0,
        latencyP50Ms: bobLatency[0],
        latencyP95Ms: bobLatency[0],
      },
    ]);
    // Whatever a client groups by, it finds only its own conversations.
    expect((await usage('groupBy=day', bob)).body).toEqual([expect.objectContaining({ conversations: 1, turns: 2 })]);
    expect((await usage('groupBy=subject&subject=bob', bob)).body.map((r: { subject: string }) => r.subject)).toEqual([
      'bob',
    ]);
  });

  it('refuses a client that asks for another subject’s usage with FORBIDDEN', async () => {
    const res = await usage('groupBy=subject&subject=alice', bob);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('shows admins and auditors every subject, grouped and filtered', async () => {
    const bySubject = await usage('groupBy=subject');
    expect(
      bySubject.body.map((r: { subject: string; turns: number; errors: number }) => [r.subject, r.turns, r.errors]),
    ).toEqual([
      ['alice', 2, 0],
      ['bob', 2, 3],
    ]);
    expect((await usage('groupBy=subject', auditor)).body).toEqual(bySubject.body);
    const all = await usage('groupBy=model', auditor);
    const every = [...(await latencies(aliceConversation)), ...(await latencies(bobConversation))];
    expect(all.body).toEqual([
      expect.objectContaining({
        model: 'SIM-CHAT',
        conversations: 2,
        turns: 4,
        errors: 3,
        modelCalls: 3,
        inputTokens: 230,
        latencyP50Ms: expect.closeTo(percentile(every, 0.5), 6),
        latencyP95Ms: expect.closeTo(percentile(every, 0.95), 6),
      }),
    ]);
    const onlyBob = await usage('groupBy=agent&subject=bob');
    expect(onlyBob.body).toEqual([expect.objectContaining({ agent: 'HELPDESK', conversations: 1, inputTokens: 30 })]);
    expect((await usage('groupBy=action&action=ANSWER')).body).toEqual([]);
  });

  it('gives the same usage after the read models are rebuilt from the events', async () => {
    const queries = ['groupBy=subject', 'groupBy=day', 'groupBy=action', 'groupBy=model'];
    const before = await Promise.all(queries.map(async (q) => (await usage(q)).body));
    const pool = parley.app.get<Pool>(PG_POOL);
    await rebuildProjections(pool, parley.app.get(EVENT_STORE), PROJECTIONS);
    const after = await Promise.all(queries.map(async (q) => (await usage(q)).body));
    expect(after).toEqual(before);
    expect((await usage('groupBy=subject', alice)).body).toEqual([before[0][0]]);
  });
});

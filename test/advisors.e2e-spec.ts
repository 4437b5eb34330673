import { CatalogService } from '@parley/catalog';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { AdvisorRegistry, type AdvisedReply, type AdvisorContext, type LlmRequest } from '@parley/llm';
import { REDIS, type Redis } from '@parley/platform';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const action = (code: string, advisors: unknown[]) => ({
  code,
  description: `Advised ${code}`,
  llmModel: 'SIM-CHAT',
  llmConfiguration: 'TEST',
  llmMemoryStrategy: 'FULL',
  llmActionPrompt: 'Answer briefly.',
  advisors,
});

/** The test catalog plus one advisor of each built-in bean and actions that link them. */
function catalog(simulatorUrl: string) {
  const base = testCatalog(simulatorUrl);
  return {
    ...base,
    advisors: [
      { code: 'LOG', description: 'Logs', llmAdvisorBeanName: 'logging' },
      {
        code: 'GUARD',
        description: 'Refuses sensitive words',
        llmAdvisorBeanName: 'safeGuard',
        config: { sensitiveWords: ['password', 'Secret Plan'] },
      },
      { code: 'PII', description: 'Masks PII', llmAdvisorBeanName: 'piiRedaction', llmAdvisorOrder: 10 },
      { code: 'CACHE', description: 'Caches replies', llmAdvisorBeanName: 'responseCache', llmAdvisorOrder: 5 },
    ],
    actions: [
      ...base.actions,
      action('GUARDED', [{ advisor: 'LOG' }, { advisor: 'GUARD', llmAdvisorOrder: 100 }]),
      action('PRIVATE', ['PII']),
      // The advisors' default orders: PII (10) masks before CACHE (5) computes its key.
      action('CACHED', ['CACHE', 'PII']),
    ],
  };
}

describe('advisors around the model call', () => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('advisors', {}, catalog, { destination, level: 'info' });
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async (actionCode: string) => {
    const res = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode });
    expect(res.status).toBe(201);
    return res.body.conversationId as string;
  };
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content });
  const dataOf = async (id: string, type: string) =>
    (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type).map((e) => e.data as any);
  const userText = (n: number) => {
    const messages = parley.simulator.requests[n].body!.messages;
    return messages.filter((m) => m.role === 'user').map((m) => m.content as string);
  };

  it('refuses a message with a sensitive word without calling the model, and records the refusal', async () => {
    const id = await start('GUARDED');
    const res = await send(id, 'What is the admin PASSWORD?');
    expect(res.body).toMatchObject({ status: 'CO', reply: expect.stringContaining('unable to respond') });
    expect(parley.simulator.requests).toHaveLength(0);
    expect(await dataOf(id, 'AdvisorApplied')).toEqual([
      {
        turnNo: 1,
        callNo: 1,
        advisor: 'GUARD',
        bean: 'safeGuard',
        phase: 'before',
        replaced: true,
        note: { refusal: true, sensitiveWord: 'password' },
      },
    ]);
    expect(await dataOf(id, 'ModelCallStarted')).toEqual([]);
    const [completed] = await dataOf(id, 'ModelCallCompleted');
    expect(completed).toMatchObject({ inputTokens: 0, outputTokens: 0, cost: 0 });

    const fine = await send(id, 'Where is my order?');
    expect(fine.body).toMatchObject({ status: 'CO', reply: 'You said: Where is my order?' });
    expect(parley.simulator.requests).toHaveLength(1);
  });

  it('logs a summary of each request and reply through the logger, without their content (logging)', async () => {
    const id = await start('GUARDED');
    lines.length = 0;
    await send(id, 'Where is my parcel?');
    const logged = lines.filter((l) => l.includes(`advisor LOG: conversation ${id}`)).map((l) => JSON.parse(l).msg);
    expect(logged).toEqual([
      // The one tool is AskUserQuestion, which every action is offered unless it opts out.
      expect.stringMatching(/turn 1 call 1 request to sim-chat: 2 messages \(\d+ characters\), 1 tools$/),
      expect.stringMatching(/turn 1 call 1 reply from .*: ST, 29 characters, 0 tool calls, \d+\+\d+ tokens in \d+ ms$/),
    ]);
    expect(lines.join('')).not.toContain('Where is my parcel?');
  });

  it('masks emails, phone and card numbers in the model request but keeps the message as the user sent it', async () => {
    const id = await start('PRIVATE');
    const sent = 'Mail jane.doe@example.com or call +1 415-555-0134; card 4111 1111 1111 1111, order 4111111111111112.';
    const res = await send(id, sent);
    expect(res.status).toBe(200);
    const masked = 'Mail [EMAIL] or call [PHONE]; card [CARD], order 4111111111111112.';
    expect(userText(0)).toEqual([masked]);
    const [user] = (await dataOf(id, 'MessageRecorded')).filter((m) => m.role === 'US');
    expect(user.content).toBe(sent);
    const [applied] = await dataOf(id, 'AdvisorApplied');
    expect(applied).toMatchObject({
      advisor: 'PII',
      bean: 'piiRedaction',
      phase: 'before',
      messages: {
        before: expect.stringMatching(/^[0-9a-f]{64}$/),
        after: expect.stringMatching(/^[0-9a-f]{64}$/),
        changed: [1],
      },
      note: { redactions: { email: 1, phone: 1, card: 1 } },
    });
    expect(applied.messages.before).not.toBe(applied.messages.after);
    expect(JSON.stringify(applied)).not.toContain('jane.doe');
  });

  it('answers an identical request from the cache without calling the model', async () => {
    const text = `Tell me about plan ${randomUUID()} — mail me at a@b.io`;
    const first = await start('CACHED');
    expect((await send(first, text)).body).toMatchObject({ status: 'CO' });
    expect(parley.simulator.requests).toHaveLength(1);
    const second = await start('CACHED');
    const res = await send(second, text);
    expect(res.body).toMatchObject({ status: 'CO', reply: expect.stringContaining('[EMAIL]') });
    expect(parley.simulator.requests).toHaveLength(1);
    const missed = await dataOf(first, 'AdvisorApplied');
    expect(missed.map((a) => a.advisor)).toEqual(['PII']);
    const hit = await dataOf(second, 'AdvisorApplied');
    expect(hit.map((a) => [a.advisor, a.phase, a.replaced])).toEqual([
      ['PII', 'before', undefined],
      ['CACHE', 'before', true],
    ]);
    expect(hit[1].note).toEqual({ cache: 'hit', key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // REDIS_URL is set: the reply is kept in Redis, under the instance's prefix, with a TTL.
    const redis = parley.app.get<Redis>(REDIS);
    const key = `${parley.config.prefix}:advisor-cache:${hit[1].note.key}`;
    expect(await redis.pttl(key)).toBeGreaterThan(0);
    const replies = async (id: string) =>
      (await dataOf(id, 'MessageRecorded')).filter((m) => m.role === 'AS').map((m) => m.content);
    expect(await replies(second)).toEqual(await replies(first));
  });

  it('runs before in llmAdvisorOrder descending and after in reverse, for in-process @ParleyAdvisor-style beans', async () => {
    const seen: string[] = [];
    const tagger = (tag: string) => ({
      before(request: LlmRequest, ctx: AdvisorContext) {
        seen.push(`before ${ctx.code}`);
        const [system, ...rest] = request.messages;
        return {
          request: {
            ...request,
            messages: [{ ...system, content: `${system.content} [${tag}]` } as typeof system, ...rest],
          },
        };
      },
      after(reply: AdvisedReply, ctx: AdvisorContext) {
        seen.push(`after ${ctx.code}`);
        return { reply: { ...reply, text: `${reply.text} <${tag}>` }, note: { tagged: tag } };
      },
    });
    const registry = parley.app.get(AdvisorRegistry);
    registry.register('tagA', tagger('A'));
    registry.register('tagB', tagger('B'));
    await parley.app.get(CatalogService).apply(
      {
        advisors: [
          { code: 'TAG_A', description: 'A', llmAdvisorBeanName: 'tagA', llmAdvisorOrder: 1 },
          { code: 'TAG_B', description: 'B', llmAdvisorBeanName: 'tagB', llmAdvisorOrder: 2 },
        ],
        actions: [action('ORDERED', [{ advisor: 'TAG_A', llmAdvisorOrder: 50 }, 'TAG_B'])],
      },
      { dryRun: false },
    );
    const id = await start('ORDERED');
    const res = await send(id, 'hello');
    expect(seen).toEqual(['before TAG_A', 'before TAG_B', 'after TAG_B', 'after TAG_A']);
    expect(parley.simulator.requests[0].body!.messages[0].content).toMatch(/\[A\] \[B\]$/);
    expect(res.body.reply).toBe('You said: hello <B> <A>');
    const applied = await dataOf(id, 'AdvisorApplied');
    expect(applied.map((a) => `${a.phase} ${a.advisor}`)).toEqual([
      'before TAG_A',
      'before TAG_B',
      'after TAG_B',
      'after TAG_A',
    ]);
    expect(applied[0].messages.changed).toEqual([0]);
    expect(applied[2]).toMatchObject({ replyChanged: true, note: { tagged: 'B' } });
    const [reply] = (await dataOf(id, 'MessageRecorded')).filter((m) => m.role === 'AS');
    expect(reply.content).toBe('You said: hello <B> <A>');
  });

  it('refuses an advisor with an unknown bean name at catalog apply, naming the field, and writes nothing', async () => {
    const res = await parley.call('POST', '/api/v1/catalog/apply', {
      advisors: [{ code: 'NOPE', description: 'x', llmAdvisorBeanName: 'noSuchAdvisor' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(res.body.error)).toContain('advisors[0].llmAdvisorBeanName');
    expect(JSON.stringify(res.body.error)).toContain("unknown advisor bean 'noSuchAdvisor'");
    expect((await parley.call('GET', '/api/v1/catalog/advisors/NOPE')).status).toBe(404);

    const guard = await parley.call('POST', '/api/v1/catalog/apply', {
      advisors: [{ code: 'G2', description: 'x', llmAdvisorBeanName: 'safeGuard', config: { sensitiveWords: 'x' } }],
    });
    expect([guard.status, guard.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(JSON.stringify(guard.body.error)).toContain('advisors[0].config.sensitiveWords');
  });
});

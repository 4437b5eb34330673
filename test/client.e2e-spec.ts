import {
  httpTransport,
  natsTransport,
  ParleyClient,
  ParleyError,
  type StreamFrame,
  type TurnResult,
} from '@parley/client';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { until } from '@parley/testing';
import { connect, type NatsConnection } from 'nats';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const CANCELLED = 'Order A-1001 is cancelled.';

/**
 * `@parley/client` against the running app and the simulator, the same scenario on each
 * transport: a turn with a question answered and a tool call approved, queries, a stream read
 * in two parts (no gap, no repeat), a refusal as a typed ParleyError, and a kill.
 */
describe('the typed client, @parley/client', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let nc: NatsConnection;

  beforeAll(async () => {
    parley = await startParley('client_e2e', {}, (url) => {
      const catalog = testCatalog(url);
      catalog.actions.push({
        ...catalog.actions[0],
        code: 'ORDERS',
        askUserQuestion: true,
        tools: ['ORDER_STATUS', 'CANCEL_ORDER'],
      } as (typeof catalog.actions)[number]);
      return catalog;
    });
    store = parley.app.get(EVENT_STORE);
    nc = await connect({ servers: parley.config.nats.url! });
  });
  beforeEach(() => {
    parley.simulator.script([
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: CANCELLED } },
      {
        when: { toolResult: { name: 'AskUserQuestion' } },
        reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'A-1001' } }] },
      },
      {
        when: { lastUserMessage: /cancel/i },
        reply: {
          toolCalls: [
            {
              name: 'AskUserQuestion',
              arguments: { questions: [{ key: 'reason', question: 'Why cancel it?', options: ['Too late', 'Other'] }] },
            },
          ],
        },
      },
      { when: { lastUserMessage: /hang/ }, reply: { hang: true } },
      { reply: { text: 'Hello from the simulator, streamed in small pieces.' } },
    ]);
  });
  afterAll(async () => {
    await nc?.close();
    await parley?.close();
  });

  const typesOf = async (id: string) => (await store.readStream(`conversation-${id}`)).map((e) => e.type);
  const transports = {
    http: () => httpTransport({ url: parley.url, apiKey: ADMIN_KEY }),
    nats: () => natsTransport({ connection: nc, apiKey: ADMIN_KEY, prefix: parley.config.prefix, pollMs: 100 }),
  };

  /** Frames of `stream` until `enough` says so; the iterator is closed (the connection dropped) then. */
  async function take(stream: AsyncIterable<StreamFrame>, enough: (frames: StreamFrame[]) => boolean) {
    const frames: StreamFrame[] = [];
    for await (const frame of stream) {
      frames.push(frame);
      if (enough(frames)) break;
    }
    return frames;
  }
  const stored = (frames: StreamFrame[]) => frames.filter((f) => f.id !== undefined);

  describe.each(Object.keys(transports) as (keyof typeof transports)[])('over %s', (kind) => {
    let client: ParleyClient;
    beforeAll(() => {
      client = new ParleyClient(transports[kind]());
    });
    afterAll(() => client.close());

    it('starts, sends with wait, answers a question, approves a tool call, and reads the queries', async () => {
      const started = await client.conversations.start({ agentCode: 'HELPDESK', actionCode: 'ORDERS' });
      expect(started).toMatchObject({ status: 'NS', position: expect.stringMatching(/^pg:/) });
      const id = started.conversationId;

      // Followed live: the reply's text deltas come before the turn's end, as a model streams
      // them (a chunk every 5 ms; deltas that arrive together go as one).
      parley.simulator.setLatency(5);
      let following!: () => void;
      const subscribed = new Promise<void>((resolve) => (following = resolve));
      const live = take(client.conversations.stream(id), (f) => {
        following(); // the first stored event came: the stream listens for deltas by now
        return f.at(-1)!.event === 'ConversationCompleted';
      });
      await subscribed;
      const hello = await client.conversations.send(id, { content: 'Hello!' }, { wait: true });
      expect(hello).toMatchObject({ done: true, status: 'CO', reply: expect.stringContaining('Hello from') });
      const followed = await live;
      parley.simulator.setLatency(0);
      const deltas = followed.filter((f) => f.event === 'delta').map((f) => (f.data as { text?: string }).text ?? '');
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe((hello as TurnResult & { done: true }).reply);

      const asked = await client.conversations.send(id, { content: 'Please cancel order A-1001' });
      expect(asked.done && asked.status).toBe('WA');
      const question = (asked as TurnResult & { done: true }).pendingQuestion!;
      expect(question.questions[0]).toMatchObject({ key: 'reason', question: 'Why cancel it?' });

      const approval = await client.conversations.answer(id, { reason: 'Too late' });
      expect(approval).toMatchObject({ done: true, status: 'WA' });
      const [pending] = (approval as TurnResult & { done: true }).pendingApprovals!;
      expect(pending).toMatchObject({ name: 'CANCEL_ORDER', arguments: '{"orderId":"A-1001"}' });
      expect(await typesOf(id)).not.toContain('ToolCallApproved');

      const done = await client.conversations.approve(id, pending.toolCallId);
      expect(done).toMatchObject({ done: true, status: 'CO', reply: CANCELLED });
      expect(await typesOf(id)).toEqual(
        expect.arrayContaining(['AnswersSubmitted', 'ToolCallApproved', 'ToolCallCompleted', 'ConversationCompleted']),
      );

      // Queries, reading the command's own write through minPosition.
      const conversation = (await client.conversations.get(id, done.position)) as Record<string, unknown>;
      expect(conversation).toMatchObject({ conversationUuid: id, llmProcessStatus: 'CO', llmAction: 'ORDERS' });
      const messages = (await client.conversations.messages(id, done.position))!;
      expect(messages.map((m) => m.llmMessageContent)).toEqual(
        expect.arrayContaining(['Hello!', 'Please cancel order A-1001', CANCELLED]),
      );
      const events = (await client.conversations.events(id, 0, 1000)) as { type: string }[];
      expect(events.map((e) => e.type)).toEqual(await typesOf(id));
      const usage = await client.queries.getUsage({ groupBy: 'action', minPosition: done.position });
      expect(usage).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'ORDERS' })]));
      const listed = (await client.queries.listConversations({ actionCode: 'ORDERS', minPosition: done.position })) as {
        items: { conversationUuid: string }[];
      };
      expect(listed.items.map((c) => c.conversationUuid)).toContain(id);
      // A single entity that is not there is null on both transports (HTTP's 404).
      expect(await client.queries.findAgentByCode({ code: 'NO_SUCH_AGENT' })).toBeNull();

      // The stream, read in two parts: disconnect after 4 events, resume after the last one.
      const total = events.length;
      const first = await take(client.conversations.stream(id), (f) => stored(f).length === 4);
      const last = Number(stored(first).at(-1)!.id);
      const rest = await take(
        client.conversations.stream(id, { after: last }),
        (f) => Number(stored(f).at(-1)?.id) === total - 1,
      );
      const revisions = [...stored(first), ...stored(rest)].map((f) => Number(f.id));
      expect(revisions).toEqual(Array.from({ length: total }, (_, i) => i));
      expect([...stored(first), ...stored(rest)].map((f) => f.event)).toEqual(events.map((e) => e.type));
    }, 60_000);

    it('rejects a tool call, replays an idempotent command, answers every query of the table, and terminates', async () => {
      const { conversationId: id } = await client.conversations.start(
        { agentCode: 'HELPDESK', actionCode: 'CANCEL' },
        { idempotencyKey: `start-${kind}` },
      );
      const again = await client.conversations.start(
        { agentCode: 'HELPDESK', actionCode: 'CANCEL' },
        { idempotencyKey: `start-${kind}` },
      );
      expect(again.conversationId).toBe(id);

      parley.simulator.script([
        { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Not cancelled, then.' } },
        { reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'B-2' } }] } },
      ]);
      const waiting = await client.conversations.send(
        id,
        { content: 'Cancel B-2' },
        { idempotencyKey: `send-${kind}` },
      );
      expect(waiting).toMatchObject({ done: true, status: 'WA' });
      const { toolCallId } = (waiting as TurnResult & { done: true }).pendingApprovals![0];
      const eventsBefore = (await typesOf(id)).length;
      const replayed = await client.conversations.send(
        id,
        { content: 'Cancel B-2' },
        { idempotencyKey: `send-${kind}` },
      );
      expect(replayed).toMatchObject({ done: true, status: 'WA', position: waiting.position });
      expect((await typesOf(id)).length).toBe(eventsBefore);

      const pending = await client.queries.getPendingApprovals({ conversationId: id, minPosition: waiting.position });
      expect(JSON.stringify(pending)).toContain(toolCallId);
      const rejected = await client.conversations.reject(id, toolCallId, { reason: 'not now' });
      expect(rejected).toMatchObject({ done: true, status: 'CO', reply: 'Not cancelled, then.' });
      expect(await typesOf(id)).toContain('ToolCallRejected');
      const at = { conversationId: id, minPosition: rejected.position };

      // Every query of the table answers through the client.
      expect(await client.queries.getAllActions({})).toEqual(
        expect.arrayContaining([expect.objectContaining({ code: 'CANCEL' })]),
      );
      expect(await client.queries.findActionByCode({ code: 'CANCEL' })).toMatchObject({ code: 'CANCEL' });
      expect(await client.queries.findToolByCode({ code: 'CANCEL_ORDER' })).toMatchObject({ code: 'CANCEL_ORDER' });
      expect(await client.queries.findAgentByCode({ code: 'HELPDESK' })).toMatchObject({ code: 'HELPDESK' });
      expect(await client.queries.findMcpClientByName({ name: 'none-such' })).toBeNull();
      expect(await client.queries.getPendingQuestions(at)).toBeNull();
      expect(JSON.stringify(await client.queries.getToolCalls(at))).toContain(toolCallId);
      expect(await client.queries.getModelCalls(at)).toHaveLength(2);
      expect(await client.queries.getState({ conversationId: id })).toMatchObject({ state: expect.anything() });
      expect(await client.queries.verifyConversation({ conversationId: id })).toMatchObject({ ok: true });
      expect(await client.queries.getGlobalFeed({ limit: 5 })).toBeTruthy();

      const terminated = await client.conversations.terminate(id, 'done here');
      expect(terminated).toMatchObject({ conversationId: id, status: 'TE' });
      const frames = await take(client.conversations.stream(id), () => false); // ends by itself
      expect(frames.at(-1)!.event).toBe('ConversationTerminated');
    }, 30_000);

    it('refuses bad input with a ParleyError carrying the code and field path, and appends nothing', async () => {
      const { conversationId: id } = await client.conversations.start({ agentCode: 'HELPDESK', actionCode: 'CHAT' });
      const before = await typesOf(id);
      const refused = await client.conversations.send(id, { content: '   ' }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ParleyError);
      expect(refused).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
      expect((refused as ParleyError).problems.map((p) => p.path)).toContain('content');
      expect(await typesOf(id)).toEqual(before);

      const missing = await client.conversations
        .kill('00000000-0000-4000-8000-000000000000', 'no such conversation')
        .catch((err: unknown) => err);
      expect(missing).toMatchObject({ name: 'ParleyError', code: 'NOT_FOUND', status: 404 });
      const unauthenticated = new ParleyClient(
        kind === 'http'
          ? httpTransport({ url: parley.url, apiKey: 'pk_nope' })
          : natsTransport({ connection: nc, apiKey: 'pk_nope', prefix: parley.config.prefix }),
      );
      await expect(unauthenticated.conversations.get(id)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }, 30_000);

    it('kills a running turn: the turn answers done: false without waiting, and the live stream ends with the kill', async () => {
      const { conversationId: id } = await client.conversations.start({ agentCode: 'HELPDESK', actionCode: 'CHAT' });
      const frames: StreamFrame[] = [];
      const following = (async () => {
        for await (const frame of client.conversations.stream(id)) frames.push(frame);
      })();
      const calls = parley.simulator.requests.length;
      const running = await client.conversations.send(id, { content: 'hang here' }, { wait: false });
      expect(running).toMatchObject({ done: false, conversationId: id });
      expect(running).not.toHaveProperty('usage');
      await until(async () => parley.simulator.requests.length > calls, 10_000);

      const killed = await client.conversations.kill(id, 'stopped by the client test');
      expect(killed).toMatchObject({ conversationId: id, status: 'KI' });
      await following; // ends by itself after ConversationKilled
      expect(frames.at(-1)!.event).toBe('ConversationKilled');
      expect(stored(frames).map((f) => f.event)).toEqual(await typesOf(id));
    }, 30_000);
  });
  it('over HTTP, reopens a dropped stream with Last-Event-ID: no event missed or repeated', async () => {
    const http = new ParleyClient(httpTransport({ url: parley.url, apiKey: ADMIN_KEY }));
    const { conversationId: id } = await http.conversations.start({ agentCode: 'HELPDESK', actionCode: 'CHAT' });
    const done = await http.conversations.send(id, { content: 'Hello again' });
    expect(done).toMatchObject({ done: true, status: 'CO' });
    const total = (await typesOf(id)).length;

    // A fetch whose first stream response is cut after its first few events, as a proxy would.
    const resumedFrom: (string | null)[] = [];
    const cutting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith('/stream')) return res;
      resumedFrom.push(new Headers(init?.headers).get('last-event-id'));
      if (resumedFrom.length > 1) return res;
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      let ids = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          for (;;) {
            const end = buffer.indexOf('\n\n');
            if (end >= 0) {
              const frame = buffer.slice(0, end + 2);
              buffer = buffer.slice(end + 2);
              controller.enqueue(new TextEncoder().encode(frame));
              if (/^id: /m.test(frame) && ++ids === 3) {
                await reader.cancel();
                controller.close();
              }
              return;
            }
            const { done: ended, value } = await reader.read();
            if (ended) return controller.close();
            buffer += decoder.decode(value, { stream: true });
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const dropping = new ParleyClient(
      httpTransport({ url: parley.url, apiKey: ADMIN_KEY, fetch: cutting, streamRetryMs: 10 }),
    );
    const frames = stored(
      await take(dropping.conversations.stream(id), (f) => Number(stored(f).at(-1)?.id) === total - 1),
    );
    expect(frames.map((f) => Number(f.id))).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(resumedFrom).toHaveLength(2);
    expect(resumedFrom[0]).toBeNull();
    expect(resumedFrom[1]).toBe('2'); // the third event's revision
  }, 30_000);
});

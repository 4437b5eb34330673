import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { startParley, type ParleyUnderTest } from './support/parley-app';

/** What no retry can fix is not retried: each case may call the model once at most. */
describe('turns whose output or input no store can hold', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  beforeAll(async () => {
    parley = await startParley('turn_output_guards', { EVENT_MAX_BYTES: '16384' });
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(() => parley.close());
  beforeEach(() => parley.simulator.reset());

  const start = async () =>
    (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' })).body
      .conversationId as string;
  const send = (id: string, content: string) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content, timeoutMs: 5_000 });
  const eventsOf = (id: string) => store.readStream(`conversation-${id}`);
  /** Long enough for the job's retries (200 ms backoff, then doubling) to have called the model again. */
  const settle = () => new Promise((r) => setTimeout(r, 1_500));

  it('fails a turn whose reply is over EVENT_MAX_BYTES once, with one model call, instead of retrying it', async () => {
    parley.simulator.script([{ reply: { text: 'word '.repeat(5_000) } }]);
    const id = await start();
    const res = await send(id, 'say a lot');
    expect(res.body).toMatchObject({ status: 'FA', error: { code: 'LLM_LIMIT_EXCEEDED' } });
    expect(res.body.error.message).toMatch(/over the limit of 16384 \(EVENT_MAX_BYTES\)/);
    await settle();
    expect(parley.simulator.requests).toHaveLength(1);
    const failed = (await eventsOf(id)).filter((e) => e.type === 'ConversationFailed');
    expect(failed).toHaveLength(1);
  });

  it('stores a reply with NUL characters and unpaired surrogates, each replaced, after one model call', async () => {
    parley.simulator.script([{ reply: { text: 'bad\u0000bytes and a lone \ud800 half' } }]);
    const id = await start();
    const res = await send(id, 'say something odd');
    expect(res.body).toMatchObject({ status: 'CO', reply: 'bad\uFFFDbytes and a lone \uFFFD half' });
    await settle();
    expect(parley.simulator.requests).toHaveLength(1);
  });

  it.each([
    ['a NUL character', 'hello\u0000there', /NUL characters/],
    ['an unpaired surrogate', 'hello \udc00 there', /unpaired UTF-16 surrogates/],
  ])('refuses a message with %s before anything is recorded or the model called', async (_name, content, reason) => {
    const id = await start();
    const before = (await eventsOf(id)).length;
    const res = await send(id, content);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: [{ path: 'content', message: expect.stringMatching(reason) }] },
    });
    expect((await eventsOf(id)).length).toBe(before);
    expect(parley.simulator.requests).toHaveLength(0);
  });
});

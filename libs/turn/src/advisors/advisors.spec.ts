import { loadConfig } from '@parley/config';
import type { AdvisedReply, AdvisorContext, LlmRequest } from '@parley/llm';
import { luhn, PiiRedactionAdvisor, redactPii } from './pii-redaction.advisor';
import { cacheKeyOf, ResponseCacheAdvisor } from './response-cache.advisor';

const request = (text: string): LlmRequest => ({
  provider: { code: 'SIM', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-1' },
  model: 'm',
  messages: [
    { role: 'system', content: 'Write to ops@example.com.' },
    { role: 'user', content: text },
  ],
  tools: [],
  options: { temperature: 0 },
});
const reply = (text: string): AdvisedReply => ({
  text,
  reasoning: '',
  toolCalls: [],
  finishReason: 'ST',
  responseModel: 'm',
  usage: { inputTokens: 1, outputTokens: 1, estimated: false },
  latencyMs: 5,
});
const ctx = (config: Record<string, unknown> = {}): AdvisorContext => ({
  conversationId: 'c',
  turnNo: 1,
  callNo: 1,
  code: 'CACHE',
  config,
  attributes: new Map(),
});

describe('piiRedaction', () => {
  it('masks emails, phone numbers and Luhn-valid card numbers only', () => {
    const counts = { email: 0, card: 0, phone: 0 };
    expect(
      redactPii('a.b+c@mail.co.uk, (030) 1234 5678, 5500-0000-0000-0004, 1234567890123, 2024-05-01, 42', counts),
    ).toBe('[EMAIL], [PHONE], [CARD], [PHONE], 2024-05-01, 42');
    expect(counts).toEqual({ email: 1, card: 1, phone: 2 });
    expect([luhn('4111111111111111'), luhn('4111111111111112')]).toEqual([true, false]);
  });

  it('leaves the system prompt alone and changes nothing when there is nothing to mask', () => {
    const advisor = new PiiRedactionAdvisor();
    expect(advisor.before(request('no personal data here'))).toBeUndefined();
    const out = advisor.before(request('I am x@y.io'))!;
    expect(out.request!.messages).toEqual([
      { role: 'system', content: 'Write to ops@example.com.' },
      { role: 'user', content: 'I am [EMAIL]' },
    ]);
  });
});

describe('responseCache without Redis', () => {
  const config = (max: number) => loadConfig({ ADVISOR_CACHE_MAX_ENTRIES: String(max), ADVISOR_CACHE_TTL_MS: '60000' });

  it('answers an identical request from memory after the reply was kept, never a different one', async () => {
    const cache = new ResponseCacheAdvisor(config(10), null);
    const first = ctx();
    expect(await cache.before(request('hi'), first)).toBeUndefined();
    await cache.after(reply('hello'), first);
    const hit = await cache.before(request('hi'), ctx());
    expect(hit).toEqual({
      reply: { ...reply('hello'), latencyMs: 0 },
      note: { cache: 'hit', key: cacheKeyOf(request('hi')) },
    });
    expect(await cache.before(request('hi!'), ctx())).toBeUndefined();
    expect(cacheKeyOf({ ...request('hi'), provider: { ...request('hi').provider, apiKey: 'other' } })).toBe(
      cacheKeyOf(request('hi')),
    );
  });

  it('keeps only replies that end normally, drops the least recently used past its size, and expires entries', async () => {
    const cache = new ResponseCacheAdvisor(config(2), null);
    const keep = async (text: string, r: AdvisedReply, c = ctx()) => {
      await cache.before(request(text), c);
      await cache.after(r, c);
    };
    await keep('tools', { ...reply(''), finishReason: 'TC', toolCalls: [{ id: 't', name: 'x', arguments: '{}' }] });
    expect(await cache.before(request('tools'), ctx())).toBeUndefined();
    await keep('a', reply('A'));
    await keep('b', reply('B'));
    expect(await cache.before(request('a'), ctx())).toBeDefined();
    await keep('c', reply('C'));
    expect(await cache.before(request('b'), ctx())).toBeUndefined();
    expect(await cache.before(request('a'), ctx())).toBeDefined();
    await keep('short', reply('S'), ctx({ ttlMs: 1 }));
    await new Promise((r) => setTimeout(r, 10));
    expect(await cache.before(request('short'), ctx())).toBeUndefined();
  });
});

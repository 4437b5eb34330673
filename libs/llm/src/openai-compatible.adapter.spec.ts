import { startSimulator, type Simulator } from '@parley/testing';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
import { collect, requestFor } from './llm.spec-helpers';

describe('OpenAiCompatibleAdapter', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it('streams text as deltas and finishes with ST and the provider usage', async () => {
    sim.script([{ reply: { text: 'Hello there, how can I help?', tokens: { prompt: 12, completion: 8 } } }]);
    const result = await collect(adapter.stream(requestFor(sim, 'hi')));
    expect(result.text).toBe('Hello there, how can I help?');
    expect(result.all.filter((e) => e.type === 'text').length).toBeGreaterThan(3);
    expect(result.finish).toEqual({
      type: 'finish',
      finishReason: 'ST',
      usage: { inputTokens: 12, outputTokens: 8, estimated: false },
      responseModel: 'sim-chat',
    });
  });

  it('assembles tool-call deltas split across chunks into whole calls, each once, after the text', async () => {
    sim.script([
      {
        reply: {
          text: 'Let me check.',
          toolCalls: [
            { name: 'get_order_status', arguments: { orderId: '1234567890' } },
            { name: 'get_order_status', arguments: { orderId: '42', verbose: true } },
          ],
        },
      },
    ]);
    const result = await collect(adapter.stream(requestFor(sim, 'where are my orders?')));
    expect(result.toolCalls).toEqual([
      { id: 'call_1_0', name: 'get_order_status', arguments: '{"orderId":"1234567890"}' },
      { id: 'call_1_1', name: 'get_order_status', arguments: '{"orderId":"42","verbose":true}' },
    ]);
    expect(result.all.map((e) => e.type).slice(-3)).toEqual(['tool_call', 'tool_call', 'finish']);
    expect(result.finish).toMatchObject({ finishReason: 'TC' });
  });

  it('passes malformed tool arguments through raw for the caller to validate', async () => {
    sim.script([{ reply: { toolCalls: [{ name: 'get_order_status', arguments: '{"orderId": 42,,' }] } }]);
    const result = await collect(adapter.stream(requestFor(sim, 'order?')));
    expect(result.toolCalls).toEqual([{ id: 'call_1_0', name: 'get_order_status', arguments: '{"orderId": 42,,' }]);
  });

  it.each([
    ['length', 'LE'],
    ['content_filter', 'CF'],
  ] as const)('maps finish reason %s to %s', async (raw, code) => {
    sim.script([{ reply: { text: 'Cut', finishReason: raw } }]);
    const result = await collect(adapter.stream(requestFor(sim, 'go')));
    expect(result.finish).toMatchObject({ finishReason: code });
  });

  it('sends only the options that are set, top_k as an extra body field', async () => {
    const request = requestFor(sim, 'hi', {
      options: {
        maxTokens: 256,
        temperature: 0.2,
        topK: 40,
        responseFormat: { type: 'json_schema', name: 'Answer', schema: { type: 'object' }, strict: true },
      },
    });
    await collect(adapter.stream(request));
    const body = sim.requests[0].body!;
    expect(body).toMatchObject({
      model: 'sim-chat',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      temperature: 0.2,
      top_k: 40,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'Answer', schema: { type: 'object' }, strict: true },
      },
      tools: [{ type: 'function', function: { name: 'get_order_status', description: 'Looks up an order.' } }],
    });
    expect(body).not.toHaveProperty('top_p');
    expect(body).not.toHaveProperty('frequency_penalty');
    expect(body).not.toHaveProperty('presence_penalty');
  });

  it('maps assistant tool calls and tool results to the OpenAI message shapes', async () => {
    const request = requestFor(sim, 'order 7?');
    request.messages.push(
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 'c1', name: 'get_order_status', arguments: '{"orderId":"7"}' }],
      },
      { role: 'tool', toolCallId: 'c1', content: '{"status":"shipped"}' },
    );
    request.tools = [];
    await collect(adapter.stream(request));
    const body = sim.requests[0].body!;
    expect(body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_order_status', arguments: '{"orderId":"7"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"status":"shipped"}' },
    ]);
    expect(body).not.toHaveProperty('tools');
  });

  it("sends the provider's key and headers, and no Authorization when the provider has no key", async () => {
    const keyed = requestFor(sim, 'hi');
    keyed.provider = { ...keyed.provider, headers: { 'api-key': 'azure-key' } };
    await collect(adapter.stream(keyed));
    const keyless = requestFor(sim, 'hi');
    keyless.provider = { ...keyless.provider, code: 'LOCAL', apiKey: null };
    await collect(adapter.stream(keyless));
    expect(sim.requests[0].headers).toMatchObject({ authorization: 'Bearer sk-test', 'api-key': 'azure-key' });
    expect(sim.requests[1].headers).not.toHaveProperty('authorization');
  });
});

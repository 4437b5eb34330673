import { startSimulator, type Simulator } from '@parley/testing';
import { collect, ORDER_TOOL, requestFor } from '../llm.spec-helpers';
import type { LlmRequest } from '../llm.port';
import { OpenAiCompatibleAdapter } from '../openai-compatible.adapter';

/** The text protocol end to end through the adapter, against the simulator's model without a tools API. */
describe('tools as text, for a model without a tools API', () => {
  let sim: Simulator;
  const adapter = new OpenAiCompatibleAdapter();
  const textRequest = (sim: Simulator, extra: Partial<LlmRequest> = {}) =>
    requestFor(sim, 'where is order 42?', {
      model: 'sim-text-tools',
      toolProtocol: { kind: 'text', jsonMode: true },
      ...extra,
    });

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it('sends no tools parameter but the instructions block and JSON mode, and reads the call from the reply', async () => {
    sim.script([{ reply: { toolCalls: [{ name: 'get_order_status', arguments: { orderId: '42' } }] } }]);
    const result = await collect(adapter.stream(textRequest(sim)));
    const body = sim.requests[0].body!;
    expect(body.tools).toBeUndefined();
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages[0].content).toContain(
      'You may use the following tools:\n- get_order_status: Looks up an order.',
    );
    expect(result.text).toBe('');
    expect(result.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_order_status', arguments: '{"orderId":"42"}' },
    ]);
    expect(result.finish).toMatchObject({ finishReason: 'TC' });
  });

  it('streams the prose before a fenced call and keeps it as the reply’s text', async () => {
    sim.script([
      {
        reply: {
          text: 'Let me check that order.',
          toolCalls: [{ name: 'get_order_status', arguments: { orderId: '7' } }],
        },
      },
    ]);
    const result = await collect(adapter.stream(textRequest(sim, { toolProtocol: { kind: 'text', jsonMode: false } })));
    expect(sim.requests[0].body!.response_format).toBeUndefined();
    expect(result.text).toBe('Let me check that order.');
    expect(result.all.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(result.toolCalls.map((c) => c.arguments)).toEqual(['{"orderId":"7"}']);
  });

  it('sends the history’s calls and results as text, and a final JSON answer comes back as its text', async () => {
    sim.script([{ reply: { text: '{"answer": "Order 42 is on its way."}' } }]);
    const request = textRequest(sim);
    request.messages.push(
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 'c1', name: 'get_order_status', arguments: '{"orderId":"42"}' }],
      },
      { role: 'tool', toolCallId: 'c1', content: 'shipped' },
    );
    const result = await collect(adapter.stream(request));
    expect(sim.requests[0].body!.messages.slice(2)).toEqual([
      { role: 'assistant', content: '{"tool_name":"get_order_status","arguments":{"orderId":"42"}}' },
      { role: 'user', content: '{"tool_result":"shipped","tool_name":"get_order_status"}' },
    ]);
    expect(result.text).toBe('Order 42 is on its way.');
    expect(result.finish).toMatchObject({ finishReason: 'ST' });
  });

  it('the simulator’s text-tools model refuses a tools parameter', async () => {
    await expect(collect(adapter.stream({ ...textRequest(sim), toolProtocol: { kind: 'api' } }))).rejects.toThrow(
      /has no tools API/,
    );
  });

  it('sends the configured stop sequences', async () => {
    sim.script([{ reply: { text: 'ok' } }]);
    await collect(
      adapter.stream(requestFor(sim, 'hi', { options: { stop: ['\nUser:', 'END'] }, tools: [ORDER_TOOL] })),
    );
    expect(sim.requests[0].body!.stop).toEqual(['\nUser:', 'END']);
  });
});

import OpenAI, { NotFoundError } from 'openai';
import { demoScript } from './demo-script';
import { startSimulator, type Simulator } from './simulator';

describe('startSimulator', () => {
  let sim: Simulator;
  let client: OpenAI;
  const ask = async (messages: OpenAI.ChatCompletionMessageParam[]) =>
    (await client.chat.completions.create({ model: 'sim-chat', messages })).choices[0];

  beforeAll(async () => {
    sim = await startSimulator();
    client = new OpenAI({ baseURL: sim.url, apiKey: 'sk-sim', maxRetries: 0 });
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it('lists its models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('sim-chat');
  });

  it('answers a non-streaming request with the scripted reply and usage', async () => {
    sim.script([{ reply: { text: 'Plain answer.', tokens: { prompt: 3, completion: 2 } } }]);
    const completion = await client.chat.completions.create({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'q' }],
    });
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Plain answer.' }, finish_reason: 'stop' });
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('records each request with its body, headers and arrival time, and forgets them on reset', async () => {
    const before = Date.now();
    await ask([{ role: 'user', content: 'first' }]);
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: 'Bearer sk-sim' },
    });
    expect(sim.requests[0].body?.messages).toEqual([{ role: 'user', content: 'first' }]);
    expect(sim.requests[0].receivedAt).toBeGreaterThanOrEqual(before);
    sim.reset();
    expect(sim.requests).toHaveLength(0);
  });

  it("names each request in x-request-id, as OpenAI does, and records its own time on it up to the stream's end", async () => {
    sim.script([{ reply: { text: 'one two three four' } }]);
    sim.setLatency(30);
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let chunks = 0;
    for await (const chunk of stream) chunks += chunk.choices.length;
    await client.models.list();
    const [streamed, listed] = sim.requests;
    expect(response.headers.get('x-request-id')).toBe(streamed.id);
    expect(streamed.id).toMatch(/^sim-\d+$/);
    expect(listed.id).not.toBe(streamed.id);
    // The latency is waited before every chunk, so the simulator's time covers the whole stream.
    expect(streamed.durationMs).toBeGreaterThanOrEqual(chunks * 30 - 5);
    expect(listed.durationMs).toBeLessThan(30);
  });

  it('sends Retry-After with a scripted failure, in milliseconds and rounded up to seconds', async () => {
    sim.script([{ reply: { fail: { status: 429, retryAfterMs: 200 } } }]);
    const response = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'sim-chat', messages: [] }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after-ms')).toBe('200');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ error: { type: 'rate_limit_exceeded' } });
  });

  it('answers unknown routes with an OpenAI-style 404', async () => {
    await expect(client.moderations.create({ model: 'sim-chat', input: 'x' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('serves deterministic embeddings, also base64-encoded as the SDK asks by default', async () => {
    const floats = await client.embeddings.create({
      model: 'sim-embed',
      input: ['a b c', 'x'],
      encoding_format: 'float',
      dimensions: 16,
    });
    const packed = await client.embeddings.create({ model: 'sim-embed', input: ['a b c', 'x'], dimensions: 16 });
    expect(floats.data.map((d) => d.embedding.length)).toEqual([16, 16]);
    expect(packed.data[0].embedding[3]).toBeCloseTo(floats.data[0].embedding[3], 6);
    expect(floats.usage.prompt_tokens).toBe(4);
    await expect(client.embeddings.create({ model: 'sim-embed', input: [] })).rejects.toThrow(/input/);
  });

  it('waits the set latency before each streamed chunk, and none at zero', async () => {
    const streamFor = async () => {
      const started = Date.now();
      const stream = await client.chat.completions.create({
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      let chunks = 0;
      for await (const chunk of stream) chunks += chunk.choices.length;
      return { chunks, elapsed: Date.now() - started };
    };
    sim.script([{ reply: { text: 'one two three four' } }]);
    sim.setLatency(40);
    const slow = await streamFor();
    expect(slow.elapsed).toBeGreaterThanOrEqual(slow.chunks * 40 - 5);
    sim.setLatency(0);
    expect((await streamFor()).elapsed).toBeLessThan(slow.chunks * 40);
  });

  it('runs the demo script: an order lookup through a tool, then an answer using its result', async () => {
    sim.script(demoScript);
    const call = await ask([{ role: 'user', content: 'Where is my order A-5521?' }]);
    expect(call.finish_reason).toBe('tool_calls');
    const toolCall = call.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function).toEqual({ name: 'ORDER_STATUS', arguments: '{"orderId":"A-5521"}' });
    const answer = await ask([
      { role: 'user', content: 'Where is my order A-5521?' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      {
        role: 'tool',
        tool_call_id: toolCall.id,
        content: '{"orderId":"A-5521","status":"shipped","eta":"2026-02-03"}',
      },
    ]);
    expect(answer.message.content).toBe('Your order A-5521 has shipped; it should arrive on 2026-02-03.');
    const bare = await ask([{ role: 'user', content: 'Where is order 5521?' }]);
    expect((bare.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments).toBe(
      '{"orderId":"5521"}',
    );
    const fallback = await ask([{ role: 'user', content: 'Is there an order?' }]);
    expect((fallback.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments).toBe(
      '{"orderId":"42"}',
    );
  });

  it('runs the demo script: a ticket asks the user a question, then confirms with the answer', async () => {
    sim.script(demoScript);
    const question = await ask([{ role: 'user', content: 'Please open a ticket' }]);
    const toolCall = question.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function.name).toBe('AskUserQuestion');
    expect(JSON.parse(toolCall.function.arguments)).toEqual({
      questions: [{ key: 'priority', question: 'How urgent is it?', options: ['low', 'high'] }],
    });
    const confirmation = await ask([
      { role: 'user', content: 'Please open a ticket' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: toolCall.id, content: '{"answers":{"priority":"high"}}' },
    ]);
    expect(confirmation.message.content).toBe('Thank you. I have opened your ticket (priority: high).');
    const chat = await ask([{ role: 'user', content: 'Good morning' }]);
    expect(chat.message.content).toContain('Good morning');
  });
});

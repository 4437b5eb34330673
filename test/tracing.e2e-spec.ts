import { startTracing, type Tracing } from '@parley/observability';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startParley, type ParleyUnderTest } from './support/parley-app';

describe('one trace across HTTP, the command, the worker, the model and the tool', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | null;
  let parley: ParleyUnderTest;
  beforeAll(async () => {
    tracing = await startTracing({ serviceName: 'parley-test', exporter });
    parley = await startParley('tracing');
  });
  afterAll(async () => {
    await parley.close();
    await tracing?.shutdown();
  });

  it('nests the spans of a turn with a tool call under the HTTP request that asked for it', async () => {
    parley.simulator.script([
      { when: { noToolResult: true }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'T-1' } }] } },
      { reply: { text: 'Shipped.' } },
    ]);
    const id = (await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ANSWER' }))
      .body.conversationId;
    exporter.reset();
    const res = await parley.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'order T-1?' });
    expect(res.body.reply).toBe('Shipped.');
    const traceId = res.headers.get('x-trace-id');
    const ofTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    // The reply leaves when the turn's last event is stored; the turn's span ends a moment later,
    // once the worker has released the turn's slot and its job.
    for (const deadline = Date.now() + 5000; !ofTrace().some((s) => s.name === 'parley.turn');) {
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const spans = ofTrace();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const parentOf = (s: ReadableSpan) => spans.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

    const [command] = byName('parley.command');
    const [turn] = byName('parley.turn');
    expect(command.attributes['parley.command']).toBe('SendMessage');
    expect(parentOf(command)?.kind).toBe(1); // the HTTP server span
    expect(parentOf(turn)).toBe(command);
    const models = byName('parley.model_call');
    expect(models).toHaveLength(2);
    for (const m of models) expect(parentOf(m)).toBe(turn);
    const [tool] = byName('parley.tool_call');
    expect(tool.attributes['parley.tool']).toBe('ORDER_STATUS');
    expect(parentOf(tool)).toBe(turn);
  });
});

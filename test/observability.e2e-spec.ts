import { Logger } from '@nestjs/common';
import { until } from '@parley/testing';
import { Writable } from 'node:stream';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

const PROVIDER_KEY = 'sk-test-secret-4242';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** Every log line the app writes, as text. */
function logCapture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { destination, lines, text: () => lines.join('') };
}

/** `name{labels} value` lines of a Prometheus exposition, parsed. */
function samples(exposition: string, name: string): { labels: Record<string, string>; value: number }[] {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
      const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      return { labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) };
    });
}

describe('logs and metrics of a running conversation', () => {
  const logs = logCapture();
  let parley: ParleyUnderTest;
  let clientKey: string;
  let conversationId: string;
  const failedReplies: unknown[] = [];

  beforeAll(async () => {
    parley = await startParley('observability', {}, undefined, { destination: logs.destination, level: 'trace' });
    clientKey = (await parley.call('POST', '/api/v1/keys', { subject: 'svc-shop', roles: ['client'] })).body.key;
    const as = { authorization: `Bearer ${clientKey}` };

    conversationId = (
      await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ANSWER' }, as)
    ).body.conversationId;
    parley.simulator.script([
      { when: { toolResult: { name: 'ORDER_STATUS' } }, reply: { text: 'Order A-1001 has shipped.' } },
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'A-1001' } }] },
      },
    ]);
    const answered = await parley.call(
      'POST',
      `/api/v1/conversations/${conversationId}/messages`,
      { content: 'Where is A-1001?' },
      as,
    );
    expect(answered.body).toMatchObject({ status: 'CO', reply: 'Order A-1001 has shipped.' });

    // Some OpenAI-compatible servers echo the key they refuse; the message must not carry it anywhere.
    parley.simulator.script([
      { times: 1, reply: { fail: { status: 401, message: `Incorrect API key provided: ${PROVIDER_KEY}.` } } },
    ]);
    const refused = await parley.call(
      'POST',
      `/api/v1/conversations/${conversationId}/messages`,
      { content: 'And now?' },
      as,
    );
    expect(refused.body).toMatchObject({ status: 'FA', reply: null, error: { code: 'LLM_RUNTIME_ERROR' } });
    failedReplies.push(refused.body);

    parley.simulator.script([{ reply: { fail: { status: 500, message: `upstream failed for key ${PROVIDER_KEY}` } } }]);
    const second = (
      await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' }, as)
    ).body.conversationId;
    const failed = await parley.call('POST', `/api/v1/conversations/${second}/messages`, { content: 'hello?' }, as);
    expect(failed.body).toMatchObject({ status: 'FA', error: { code: 'LLM_RUNTIME_ERROR' } });
    failedReplies.push(failed.body);
    // The read models are written by the projector after the reply; its lag gauge is set once it has caught up.
    await until(
      async () => (await parley.call('GET', `/api/v1/conversations/${second}`)).body.llmProcessStatus === 'FA',
      10_000,
    );
  });
  afterAll(() => parley.close());

  it('sends the provider key to the model and never writes it, the admin key or a client key to the logs', () => {
    expect(parley.simulator.requests[0].headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    // A careless log line through the app's own logger: each value is masked, not just each field name.
    new Logger('SecretProbe').error(`calling with ${PROVIDER_KEY}, admin ${ADMIN_KEY}, client ${clientKey}`);
    new Logger('SecretProbe').debug({ request: { body: JSON.stringify({ key: PROVIDER_KEY }) } });

    const text = logs.text();
    expect(logs.lines.length).toBeGreaterThan(10);
    expect(text).toContain('SecretProbe');
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain(ADMIN_KEY);
    expect(text).not.toContain(clientKey);
    for (const line of logs.lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('keeps the provider key out of the events and the replies, even when the provider echoes it', async () => {
    expect(JSON.stringify(failedReplies)).toContain('Incorrect API key provided: [REDACTED]');
    expect(JSON.stringify(failedReplies)).not.toContain(PROVIDER_KEY);
    const events = await parley.call('GET', `/api/v1/conversations/${conversationId}/events?limit=1000`);
    expect(events.status).toBe(200);
    const text = JSON.stringify(events.body);
    expect(text).toContain('ModelCallFailed');
    expect(text).toContain('ToolCallCompleted');
    expect(text).not.toContain(PROVIDER_KEY);
  });

  it('exposes the model, tool, HTTP, event-store, projection and queue metrics under their names', async () => {
    const res = await fetch(`${parley.url}/metrics`);
    expect(res.status).toBe(200);
    const metrics = await res.text();

    const llm = samples(metrics, 'llm_requests_total');
    expect(llm).toEqual(
      expect.arrayContaining([
        { labels: { provider: 'SIM', model: 'sim-chat', outcome: 'ok' }, value: 2 },
        expect.objectContaining({ labels: { provider: 'SIM', model: 'sim-chat', outcome: 'error' } }),
      ]),
    );
    expect(samples(metrics, 'llm_latency_ms_count')).toEqual([
      { labels: { provider: 'SIM', model: 'sim-chat' }, value: llm.reduce((sum, s) => sum + s.value, 0) },
    ]);
    const tokens = samples(metrics, 'llm_token_usage');
    expect(tokens.map((s) => s.labels)).toEqual(
      expect.arrayContaining([
        { model: 'sim-chat', direction: 'input' },
        { model: 'sim-chat', direction: 'output' },
      ]),
    );
    expect(tokens.every((s) => s.value > 0)).toBe(true);
    expect(samples(metrics, 'llm_tool_call_count')).toEqual([
      { labels: expect.objectContaining({ outcome: 'ok' }), value: 1 },
    ]);

    const http = samples(metrics, 'http_requests_total');
    expect(http).toEqual(
      expect.arrayContaining([
        { labels: { method: 'POST', route: '/api/v1/conversations', status: '201' }, value: 2 },
        { labels: { method: 'POST', route: '/api/v1/conversations/:id/messages', status: '200' }, value: 3 },
      ]),
    );
    expect(samples(metrics, 'event_store_append_ms_count')[0].value).toBeGreaterThan(5);
    expect(samples(metrics, 'queue_depth')).toEqual([
      { labels: { queue: 'turns' }, value: 0 },
      { labels: { queue: 'timers' }, value: expect.any(Number) },
      { labels: { queue: 'ingestion' }, value: 0 },
    ]);
    expect(samples(metrics, 'projection_lag_ms').length).toBeGreaterThan(0);

    const withIds = metrics.split('\n').filter((line) => !line.startsWith('#') && UUID.test(line));
    expect(withIds).toEqual([]);
    expect(metrics).not.toContain(conversationId);
  });
});

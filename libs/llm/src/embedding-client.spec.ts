import { MetricsService } from '@parley/observability';
import { SIM_EMBEDDING_DIMENSIONS, startSimulator, type Simulator } from '@parley/testing';
import { BreakerRegistry } from './breaker-registry';
import { EmbeddingClient } from './embedding-client';
import { LlmError } from './llm-error';
import { failureOf, providerFor } from './llm.spec-helpers';

const cosine = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i], 0);

describe('EmbeddingClient over the simulator (real HTTP, openai SDK)', () => {
  let sim: Simulator;
  beforeAll(async () => (sim = await startSimulator()));
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  const client = (options: ConstructorParameters<typeof EmbeddingClient>[1] = {}) =>
    new EmbeddingClient(new BreakerRegistry({ threshold: 5, halfOpenAfterMs: 1000 }), { baseDelayMs: 1, ...options });

  it('embeds texts into unit vectors, in input order, with texts sharing words close together', async () => {
    const inputs = ['refund policy for damaged goods', 'damaged goods refund policy', 'weather in Lisbon today'];
    const result = await client().embed({ provider: providerFor(sim), model: 'sim-embed', inputs });
    expect(result.vectors).toHaveLength(3);
    for (const v of result.vectors) {
      expect(v).toHaveLength(SIM_EMBEDDING_DIMENSIONS);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    }
    const [a, b, c] = result.vectors;
    expect(cosine(a, b)).toBeGreaterThan(0.6);
    expect(cosine(a, c)).toBeLessThan(0.3);
    // Deterministic: the same text gives the same vector.
    const again = await client().embed({ provider: providerFor(sim), model: 'sim-embed', inputs: [inputs[0]] });
    expect(again.vectors[0]).toEqual(a);
    expect(result.tokens).toBe(5 + 4 + 4);
  });

  it('sends batches of the configured size and counts tokens and cost over all of them', async () => {
    const inputs = Array.from({ length: 7 }, (_, i) => `chunk number ${i}`);
    const metrics = new MetricsService();
    const result = await client({ batchSize: 3, metrics }).embed({
      provider: providerFor(sim),
      model: 'sim-embed',
      inputs,
      dimensions: 32,
      inputTokenPrice: 0.5,
    });
    const posts = sim.requests.filter((r) => r.path === '/v1/embeddings');
    expect(posts.map((r) => (r.body as any).input.length)).toEqual([3, 3, 1]);
    expect(posts.every((r) => (r.body as any).dimensions === 32)).toBe(true);
    expect(result.batches).toBe(3);
    expect(result.vectors.map((v) => v.length)).toEqual(Array(7).fill(32));
    expect(result.vectors[4]).toEqual(
      (await client().embed({ provider: providerFor(sim), model: 'sim-embed', inputs: [inputs[4]], dimensions: 32 }))
        .vectors[0],
    );
    expect(result.tokens).toBe(21);
    expect(result.cost).toBeCloseTo(10.5);
    const text = await metrics.render();
    expect(text).toContain('llm_token_usage{model="sim-embed",direction="embedding"} 21');
    expect(text).toContain('llm_requests_total{provider="SIM",model="sim-embed",outcome="ok"} 3');
  });

  it('retries a retryable failure and then succeeds', async () => {
    sim.script([{ when: { callCount: 1 }, reply: { fail: { status: 503 } } }]);
    const result = await client({ attempts: 3 }).embed({
      provider: providerFor(sim),
      model: 'sim-embed',
      inputs: ['a b'],
    });
    expect(result.vectors).toHaveLength(1);
    expect(sim.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(2);
  });

  it('does not retry a bad request, and opens the breaker after repeated failures', async () => {
    sim.script([{ reply: { fail: { status: 400, message: 'Bad input.' } } }]);
    const err = await failureOf(() =>
      client().embed({ provider: providerFor(sim), model: 'sim-embed', inputs: ['x'] }),
    );
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).kind).toBe('bad_request');
    expect(sim.requests).toHaveLength(1);

    sim.script([{ reply: { fail: { status: 503 } } }]);
    const breakers = new BreakerRegistry({ threshold: 2, halfOpenAfterMs: 60_000 });
    const c = new EmbeddingClient(breakers, { attempts: 3, baseDelayMs: 1 });
    const open = await failureOf(() => c.embed({ provider: providerFor(sim), model: 'sim-embed', inputs: ['x'] }));
    expect((open as LlmError).kind).toBe('circuit_open');
  });
});

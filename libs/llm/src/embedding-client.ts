import { CallDeadline } from './call-deadline';
import type { BreakerRegistry } from './breaker-registry';
import { LlmError, toLlmError } from './llm-error';
import type { ProviderEndpoint } from './llm.port';
import { OpenAiClientCache } from './openai-client-cache';
import { RETRY_DEFAULTS, withRetries } from './retry-policy';

/** One embedding call: texts to vectors with an `embedding` model of the catalog. */
export interface EmbeddingRequest {
  provider: ProviderEndpoint;
  /** The provider's model name (the catalog model's llmModelName). */
  model: string;
  inputs: string[];
  /** Ask for vectors of this length (models that support it). */
  dimensions?: number;
  /** Per token, as the catalog's llmInputTokenPrice (0 when unset). */
  inputTokenPrice?: number;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Tokens over all batches, as the provider reported them. */
  tokens: number;
  cost: number;
  /** Requests sent (batches), retries not counted. */
  batches: number;
  latencyMs: number;
}

/** Where the counts go (MetricsService fits it); optional so the client runs without metrics. */
export interface EmbeddingMetrics {
  recordLlmRequest(
    labels: { provider: string; model: string; outcome: 'ok' | 'error' | 'timeout' | 'limit' },
    latencyMs: number,
  ): void;
  recordEmbeddingUsage(model: string, tokens: number): void;
}

export interface EmbeddingClientOptions {
  /** Texts per request (EMBEDDING_BATCH_SIZE). */
  batchSize?: number;
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
  metrics?: EmbeddingMetrics;
}

/**
 * Embeddings through the provider's OpenAI-compatible `/v1/embeddings`, with the openai SDK
 * and the same client cache, undici agent, retries and per-provider circuit breaker as chat
 * calls. A long list goes in batches of `batchSize`; each batch is one retried attempt.
 */
export class EmbeddingClient {
  private readonly batchSize: number;

  constructor(
    private readonly breakers: BreakerRegistry,
    private readonly options: EmbeddingClientOptions = {},
    private readonly clients = new OpenAiClientCache(),
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 64);
  }

  async embed(request: EmbeddingRequest, signal?: AbortSignal): Promise<EmbeddingResult> {
    const startedAt = Date.now();
    const vectors: number[][] = [];
    let tokens = 0;
    let batches = 0;
    for (let i = 0; i < request.inputs.length; i += this.batchSize) {
      const batch = request.inputs.slice(i, i + this.batchSize);
      const result = await this.batch(request, batch, signal);
      vectors.push(...result.vectors);
      tokens += result.tokens;
      batches += 1;
    }
    return {
      vectors,
      tokens,
      cost: tokens * (request.inputTokenPrice ?? 0),
      batches,
      latencyMs: Date.now() - startedAt,
    };
  }

  private async batch(
    request: EmbeddingRequest,
    inputs: string[],
    signal?: AbortSignal,
  ): Promise<{ vectors: number[][]; tokens: number }> {
    const { metrics } = this.options;
    const labels = { provider: request.provider.code, model: request.model };
    return withRetries(
      async () => {
        const started = Date.now();
        try {
          const result = await this.breakers.execute(request.provider.code, () =>
            this.attempt(request, inputs, signal),
          );
          metrics?.recordLlmRequest({ ...labels, outcome: 'ok' }, Date.now() - started);
          metrics?.recordEmbeddingUsage(request.model, result.tokens);
          return result;
        } catch (err) {
          const outcome = err instanceof LlmError && err.kind === 'timeout' ? 'timeout' : 'error';
          metrics?.recordLlmRequest({ ...labels, outcome }, Date.now() - started);
          throw err;
        }
      },
      {
        attempts: this.options.attempts ?? RETRY_DEFAULTS.attempts,
        baseDelayMs: this.options.baseDelayMs,
        maxDelayMs: this.options.maxDelayMs,
        signal,
      },
    );
  }

  private async attempt(
    request: EmbeddingRequest,
    inputs: string[],
    signal?: AbortSignal,
  ): Promise<{ vectors: number[][]; tokens: number }> {
    const deadline = new CallDeadline({ signal, timeoutMs: this.options.timeoutMs });
    try {
      const client = this.clients.get(request.provider);
      const response = await client.embeddings.create(
        {
          model: request.model,
          input: inputs,
          encoding_format: 'float',
          ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
        },
        { signal: deadline.signal },
      );
      const data = [...response.data].sort((a, b) => a.index - b.index);
      if (data.length !== inputs.length) {
        throw new LlmError(
          'server_error',
          `The provider returned ${data.length} embeddings for ${inputs.length} inputs.`,
        );
      }
      return { vectors: data.map((d) => d.embedding), tokens: response.usage?.prompt_tokens ?? 0 };
    } catch (err) {
      throw deadline.error() ?? toLlmError(err, 'request');
    } finally {
      deadline.dispose();
    }
  }
}

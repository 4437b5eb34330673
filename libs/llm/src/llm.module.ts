import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { MetricsService } from '@parley/observability';
import { BreakerRegistry } from './breaker-registry';
import { EmbeddingClient } from './embedding-client';
import { LlmClient } from './llm-client';
import { LLM_PORT, type LlmPort } from './llm.port';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';

/**
 * LLM_PORT (the OpenAI-compatible adapter), one BreakerRegistry for the process, and an
 * LlmClient whose retry count, delay and call timeout come from the configuration.
 * Needs CONFIG (ConfigModule is global); the EmbeddingClient counts into MetricsService when present.
 */
@Module({
  providers: [
    { provide: LLM_PORT, useFactory: (): LlmPort => new OpenAiCompatibleAdapter() },
    {
      provide: BreakerRegistry,
      inject: [CONFIG],
      useFactory: (config: Config) =>
        new BreakerRegistry({ threshold: config.llm.breakerFailures, halfOpenAfterMs: config.llm.breakerCooldownMs }),
    },
    {
      provide: LlmClient,
      inject: [LLM_PORT, BreakerRegistry, CONFIG],
      useFactory: (port: LlmPort, breakers: BreakerRegistry, config: Config) =>
        new LlmClient(port, breakers, {
          attempts: Math.max(1, config.llm.retryCount),
          baseDelayMs: config.llm.retryDelayMs,
          timeoutMs: config.llm.callTimeoutMs,
        }),
    },
    {
      provide: EmbeddingClient,
      inject: [BreakerRegistry, CONFIG, { token: MetricsService, optional: true }],
      useFactory: (breakers: BreakerRegistry, config: Config, metrics?: MetricsService) =>
        new EmbeddingClient(breakers, {
          batchSize: config.llm.embeddingBatchSize,
          attempts: Math.max(1, config.llm.retryCount),
          baseDelayMs: config.llm.retryDelayMs,
          timeoutMs: config.llm.callTimeoutMs,
          metrics,
        }),
    },
  ],
  exports: [LLM_PORT, BreakerRegistry, LlmClient, EmbeddingClient],
})
export class LlmModule {}

import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { BreakerRegistry } from './breaker-registry';
import { LlmClient } from './llm-client';
import { LLM_PORT, type LlmPort } from './llm.port';
import { OpenAiCompatibleAdapter } from './openai-compatible.adapter';

/**
 * LLM_PORT (the OpenAI-compatible adapter), one BreakerRegistry for the process, and an
 * LlmClient whose retry count, delay and call timeout come from the configuration.
 * Needs CONFIG (ConfigModule is global).
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
  ],
  exports: [LLM_PORT, BreakerRegistry, LlmClient],
})
export class LlmModule {}

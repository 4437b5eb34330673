export * from './llm.port';
export { OpenAiCompatibleAdapter } from './openai-compatible.adapter';
export { LlmError, parseRetryAfter, type LlmErrorKind } from './llm-error';
export { withRetries, retryDelay, RETRY_DEFAULTS, type RetryInfo, type RetryOptions } from './retry-policy';
export { BreakerRegistry, type BreakerOptions, type BreakerState } from './breaker-registry';
export {
  LlmClient,
  type LlmAttemptFailure,
  type LlmCallHooks,
  type LlmCallResult,
  type LlmCallSettings,
  type LlmClientDefaults,
} from './llm-client';
export { LlmModule } from './llm.module';

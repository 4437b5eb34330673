export {
  PROVIDER_ENDPOINTS,
  type LlmContentPart,
  type LlmMessage,
  type LlmRequest,
  type LlmStreamEvent,
  type ProviderEndpoint,
  type ProviderEndpoints,
  type ToolProtocol,
} from './llm.port';
export { toolProtocolFor } from './text-tools/tool-instructions';
export { LlmError } from './llm-error';
export { modelStepLine, type ModelStep } from './model-step-log';
export { LlmClient, type LlmAttemptFailure, type LlmCallHooks, type LlmCallResult } from './llm-client';
export { LlmModule } from './llm.module';
export { BreakerRegistry } from './breaker-registry';
export {
  ParleyAdvisor,
  BUILT_IN_ADVISORS,
  type Advisor,
  type AdvisorContext,
  type AdvisorOutcome,
  type AdvisedReply,
  type ParleyAdvisorOptions,
} from './advisors/advisor';
export { AdvisorRegistry, type RegisteredAdvisor } from './advisors/advisor-registry';
export {
  EmbeddingClient,
  type EmbeddingClientOptions,
  type EmbeddingMetrics,
  type EmbeddingRequest,
  type EmbeddingResult,
} from './embedding-client';

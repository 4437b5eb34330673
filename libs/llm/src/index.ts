export {
  PROVIDER_ENDPOINTS,
  type LlmContentPart,
  type LlmMessage,
  type LlmRequest,
  type ProviderEndpoint,
  type ProviderEndpoints,
} from './llm.port';
export { LlmError } from './llm-error';
export { LlmClient, type LlmCallResult } from './llm-client';
export { LlmModule } from './llm.module';

import { availableTools, type ExistingConversation, type ModelCallPlan } from '@parley/domain';
import { toolProtocolFor, type LlmRequest, type ProviderEndpoint } from '@parley/llm';
import { buildMessages } from './build-messages';

/**
 * The request of a model call: the frozen snapshot's model and options, the memory, the tools the
 * model may call now, offered as its capabilities allow (the tools API with FC, else as text). Pure.
 */
export function modelRequest(c: ExistingConversation, plan: ModelCallPlan, provider: ProviderEndpoint): LlmRequest {
  const { model, options } = c.snapshot;
  return {
    provider,
    model: model.name,
    messages: buildMessages(c),
    tools: availableTools(c).map(({ name, description, parameters }) => ({ name, description, parameters })),
    options: plan.maxTokens === undefined ? options : { ...options, maxTokens: plan.maxTokens },
    toolProtocol: toolProtocolFor(model.capabilities),
  };
}

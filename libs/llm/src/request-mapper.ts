import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ResponseFormat } from '@parley/core';
import type { LlmMessage, LlmRequest } from './llm.port';
import { asksJsonMode, finalAnswerForm, textProtocolMessages } from './text-tools/tool-instructions';

/** The streaming request body; `top_k` is not in OpenAI's schema but vLLM, Ollama and others read it. */
export type ChatStreamParams = ChatCompletionCreateParamsStreaming & { top_k?: number };

function toMessage(message: LlmMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part): ChatCompletionContentPart =>
                part.type === 'text'
                  ? { type: 'text', text: part.text }
                  : { type: 'image_url', image_url: { url: part.url } },
              ),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toResponseFormat(format: ResponseFormat): ChatStreamParams['response_format'] {
  return format.type === 'json_object'
    ? { type: 'json_object' }
    : { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, strict: format.strict } };
}

/**
 * A request to a model without a tools API (toolProtocol `text`): no `tools` parameter; the
 * tools and their history travel as text (textProtocolMessages). With tools and `jsonMode`,
 * JSON mode is asked for: `json_object`, also in place of an action's `json_schema`, whose
 * forced shape would leave the model no way to write a call (its schema block in the prompt
 * still describes the answer).
 */
function textProtocol(request: LlmRequest): Pick<ChatStreamParams, 'messages' | 'response_format'> {
  const own = request.options.responseFormat;
  const messages = textProtocolMessages(request.messages, request.tools, finalAnswerForm(request)).map(toMessage);
  const format = asksJsonMode(request) ? { type: 'json_object' as const } : own ? toResponseFormat(own) : undefined;
  return { messages, ...(format ? { response_format: format } : {}) };
}

/** Only the options the configuration sets are sent, so each server keeps its own defaults for the rest. */
export function toChatParams(request: LlmRequest): ChatStreamParams {
  const { options } = request;
  if (request.toolProtocol?.kind === 'text') {
    return { ...toChatParams({ ...request, tools: [], toolProtocol: undefined }), ...textProtocol(request) };
  }
  const optional = {
    max_tokens: options.maxTokens,
    temperature: options.temperature,
    top_p: options.topP,
    top_k: options.topK,
    frequency_penalty: options.frequencyPenalty,
    presence_penalty: options.presencePenalty,
    response_format: options.responseFormat ? toResponseFormat(options.responseFormat) : undefined,
    stop: options.stop?.length ? options.stop : undefined,
  };
  return {
    model: request.model,
    messages: request.messages.map(toMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((t) => ({
            type: 'function' as const,
            function: { name: t.name, description: t.description, parameters: t.parameters },
          })),
        }
      : {}),
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}

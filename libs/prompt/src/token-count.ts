import {
  getEncoding,
  getEncodingNameForModel,
  type Tiktoken,
  type TiktokenEncoding,
  type TiktokenModel,
} from 'js-tiktoken';

/**
 * Token counts with the model's real tokenizer. Models tiktoken does not know (local and
 * OpenAI-compatible ones) are counted with o200k_base, the encoding of current OpenAI models:
 * an estimate, but a stable one.
 */
const FALLBACK_ENCODING: TiktokenEncoding = 'o200k_base';
const encoders = new Map<TiktokenEncoding, Tiktoken>();

// Per-message framing of the chat format (OpenAI cookbook): each message costs 3 tokens of
// wrapping, a reply is primed with 3 more; an image part is counted at the low-detail rate.
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const TOKENS_PER_IMAGE = 85;

export function encodingNameFor(modelName: string): TiktokenEncoding {
  try {
    return getEncodingNameForModel(modelName as TiktokenModel);
  } catch {
    return FALLBACK_ENCODING;
  }
}

function encoderFor(modelName: string): Tiktoken {
  const name = encodingNameFor(modelName);
  let encoder = encoders.get(name);
  if (!encoder) {
    encoder = getEncoding(name);
    encoders.set(name, encoder);
  }
  return encoder;
}

export function countTokens(text: string, modelName: string): number {
  return text.length === 0 ? 0 : encoderFor(modelName).encode(text).length;
}

/** The shape of a chat message as far as counting goes (LlmMessage fits it). */
export interface CountableMessage {
  role: string;
  content: string | null | ReadonlyArray<{ type: 'text'; text: string } | { type: 'image_url'; url: string }>;
  toolCalls?: ReadonlyArray<{ name: string; arguments: string }>;
  toolCallId?: string;
}

export function countMessageTokens(messages: readonly CountableMessage[], modelName: string): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTokens(message.role, modelName);
    if (typeof message.content === 'string') total += countTokens(message.content, modelName);
    else if (message.content) {
      for (const part of message.content) {
        total += part.type === 'text' ? countTokens(part.text, modelName) : TOKENS_PER_IMAGE;
      }
    }
    for (const call of message.toolCalls ?? []) {
      total += countTokens(call.name, modelName) + countTokens(call.arguments, modelName);
    }
    if (message.toolCallId) total += countTokens(message.toolCallId, modelName);
  }
  return total;
}

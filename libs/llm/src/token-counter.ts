import { getEncoding, type Tiktoken } from 'js-tiktoken';
import type { LlmMessage, LlmToolCall, LlmToolSpec } from './llm.port';

type EncodingName = 'o200k_base' | 'cl100k_base';

const encoders = new Map<EncodingName, Tiktoken>();

/** cl100k_base for the GPT-4 / GPT-3.5 family, o200k_base for gpt-4o, the o-series and any other model. */
export function encodingFor(model: string): EncodingName {
  return /^(gpt-4(?!o|\.1|\.5)|gpt-3\.5|text-embedding-3|text-embedding-ada)/i.test(model)
    ? 'cl100k_base'
    : 'o200k_base';
}

function encoder(model: string): Tiktoken {
  const name = encodingFor(model);
  let enc = encoders.get(name);
  if (!enc) {
    // Built lazily: loading a rank table takes a noticeable fraction of a second.
    enc = getEncoding(name);
    encoders.set(name, enc);
  }
  return enc;
}

export function countTokens(model: string, text: string): number {
  return text ? encoder(model).encode(text).length : 0;
}

/** Framing tokens OpenAI documents per message and for priming the reply. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

function contentText(message: LlmMessage): string {
  if (message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** An estimate of the prompt: every message with its framing, tool calls and tool definitions. */
export function countPromptTokens(model: string, messages: LlmMessage[], tools: LlmToolSpec[] = []): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + countTokens(model, message.role) + countTokens(model, contentText(message));
    if (message.role === 'assistant') total += countToolCallTokens(model, message.toolCalls ?? []);
    if (message.role === 'tool') total += countTokens(model, message.toolCallId);
  }
  if (tools.length > 0) total += countTokens(model, JSON.stringify(tools));
  return total;
}

export function countToolCallTokens(model: string, calls: LlmToolCall[]): number {
  return calls.reduce((sum, c) => sum + countTokens(model, c.name) + countTokens(model, c.arguments), 0);
}

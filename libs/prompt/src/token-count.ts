import { LRUCache } from 'lru-cache';
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

const encodingNames = new Map<string, TiktokenEncoding>();

export function encodingNameFor(modelName: string): TiktokenEncoding {
  let name = encodingNames.get(modelName);
  if (name === undefined) {
    try {
      name = getEncodingNameForModel(modelName as TiktokenModel);
    } catch {
      name = FALLBACK_ENCODING;
    }
    // Model names come from the catalog, so this stays as small as the catalog.
    encodingNames.set(modelName, name);
  }
  return name;
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

/**
 * The model's token count of `text`, through `tokenCounter`: each pre-token's count is
 * remembered, so the prompt of every turn (its instructions and history repeat) costs little
 * more than a few lookups. Special-token text such as `<|endoftext|>` is counted as plain text.
 */
export function countTokens(text: string, modelName: string): number {
  return text.length === 0 ? 0 : tokenCounter(modelName)(text);
}

/** Pieces remembered per encoding by `tokenCounter` (all cleared when full), and the longest remembered. */
const PIECE_CACHE_MAX = 100_000;
const MAX_CACHED_PIECE = 64;
const counters = new Map<TiktokenEncoding, (text: string) => number>();

/**
 * A counter of one model's tokens: the encoder's counts, faster. Text is split into the
 * encoding's pre-tokens (BPE never merges across them, so a text's count is the sum of its
 * pieces') and each piece's count is remembered (up to PIECE_CACHE_MAX pieces of at most
 * MAX_CACHED_PIECE characters): words repeat, BPE is the cost. Special-token text such as
 * `<|endoftext|>` is counted as the plain text it is.
 */
export function tokenCounter(modelName: string): (text: string) => number {
  const name = encodingNameFor(modelName);
  let counter = counters.get(name);
  if (counter) return counter;
  const encoder = encoderFor(modelName);
  const pattern = new RegExp((encoder as unknown as { patStr: string }).patStr, 'gu');
  const cache = new Map<string, number>();
  counter = (text) => {
    let total = 0;
    for (const [piece] of text.matchAll(pattern)) {
      let n = cache.get(piece);
      if (n === undefined) {
        n = encoder.encode(piece, [], []).length;
        if (piece.length <= MAX_CACHED_PIECE) {
          if (cache.size >= PIECE_CACHE_MAX) cache.clear();
          cache.set(piece, n);
        }
      }
      total += n;
    }
    return total;
  };
  counters.set(name, counter);
  return counter;
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
    total += countToolCallTokens(message.toolCalls ?? [], modelName);
    if (message.toolCallId) total += countTokens(message.toolCallId, modelName);
  }
  return total;
}

/** The arguments and names of the tool calls a model made (its output, beside its text). */
export function countToolCallTokens(
  calls: ReadonlyArray<{ name: string; arguments: string }>,
  modelName: string,
): number {
  return calls.reduce((sum, c) => sum + countTokens(c.name, modelName) + countTokens(c.arguments, modelName), 0);
}

/**
 * Token counts of tool definitions as sent, per encoding: an action offers the same tools on
 * every call (an MCP server's dozen schemas are a few thousand characters), so each set is
 * counted once. At most 500 sets and 16 M characters of them are kept; least recently used go first.
 */
const definitionCounts = new LRUCache<string, number>({
  max: 500,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_n, key) => Math.max(1, key.length),
});

function countDefinitions(tools: readonly unknown[], modelName: string): number {
  const json = JSON.stringify(tools);
  const key = `${encodingNameFor(modelName)}\u0000${json}`;
  let n = definitionCounts.get(key);
  if (n === undefined) {
    n = countTokens(json, modelName);
    definitionCounts.set(key, n);
  }
  return n;
}

/** A request's prompt: the messages with their framing, plus the tool definitions sent with them. */
export function countPromptTokens(
  messages: readonly CountableMessage[],
  tools: readonly unknown[],
  modelName: string,
): number {
  const definitions = tools.length > 0 ? countDefinitions(tools, modelName) : 0;
  return countMessageTokens(messages, modelName) + definitions;
}

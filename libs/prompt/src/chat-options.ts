import type { ChatOptions, OutputSchema, ResponseFormat } from '@parley/core';
import type { PromptSchema } from './schema-prompt';

/**
 * Chat-options building of seed 000 (LlmChatOptionsFactory): only the values the action's
 * configuration sets become options; tokenSizeMax is the output-token limit.
 */
export interface ConfigurationValues {
  samplingSizeTopK?: number | null;
  samplingSizeTopP?: number | null;
  temperature?: number | null;
  tokenSizeMax?: number | null;
  frequencyPenalty?: number | null;
  presencePenalty?: number | null;
  stop?: readonly string[] | null;
}

export interface ChatOptionsInput {
  configuration: ConfigurationValues | null;
  /** The action's single output schema, if it has one. */
  outputSchema: PromptSchema | null;
  /** Seed 000 capability codes of the model; JM allows a forced JSON response. */
  capabilities: readonly string[];
  /** Service-wide switch (ENABLE_JSON_MODE). */
  enableJsonMode: boolean;
}

export function buildChatOptions(input: ChatOptionsInput): ChatOptions {
  const c = input.configuration ?? {};
  const options: ChatOptions = {};
  if (isSet(c.tokenSizeMax)) options.maxTokens = c.tokenSizeMax;
  if (isSet(c.temperature)) options.temperature = c.temperature;
  if (isSet(c.samplingSizeTopP)) options.topP = c.samplingSizeTopP;
  if (isSet(c.samplingSizeTopK)) options.topK = c.samplingSizeTopK;
  if (isSet(c.frequencyPenalty)) options.frequencyPenalty = c.frequencyPenalty;
  if (isSet(c.presencePenalty)) options.presencePenalty = c.presencePenalty;
  if (c.stop?.length) options.stop = [...c.stop];
  const format = responseFormat(input);
  if (format) options.responseFormat = format;
  return options;
}

const isSet = (v: number | null | undefined): v is number => typeof v === 'number';

/**
 * Structured output where the model can be forced to emit JSON; otherwise none, and the
 * schema block of the prompt alone describes the shape. Providers want an object at the
 * root, so a list (or a non-object item) is wrapped in one.
 */
function responseFormat(input: ChatOptionsInput): ResponseFormat | undefined {
  const schema = input.outputSchema;
  if (!schema || !input.enableJsonMode || !input.capabilities.includes('JM')) return undefined;
  return { type: 'json_schema', name: responseName(schema.code), schema: rootObject(schema), strict: false };
}

function rootObject(schema: PromptSchema): Record<string, unknown> {
  if (schema.cardinality === 'I' && schema.jsonSchema.type === 'object') return schema.jsonSchema;
  // Definitions stay at the root, where the document's local $refs point.
  const { $defs, definitions, $schema: _dialect, ...body } = schema.jsonSchema;
  const [field, inner] = schema.cardinality === 'L' ? ['items', { type: 'array', items: body }] : ['value', body];
  return {
    type: 'object',
    properties: { [field]: inner },
    required: [field],
    ...($defs ? { $defs } : {}),
    ...(definitions ? { definitions } : {}),
  };
}

/**
 * What the final reply is validated against: the response format's schema when the model is
 * forced to JSON (with the field it wraps a list or a non-object in), else the action's schema
 * (a list as an array of it).
 */
export function outputSchemaOf(schema: PromptSchema, format: ResponseFormat | undefined): OutputSchema {
  if (format?.type === 'json_schema') {
    const wrapped = !(schema.cardinality === 'I' && schema.jsonSchema.type === 'object');
    return {
      code: schema.code,
      jsonSchema: format.schema,
      unwrap: wrapped ? (schema.cardinality === 'L' ? 'items' : 'value') : null,
    };
  }
  if (schema.cardinality === 'I') return { code: schema.code, jsonSchema: schema.jsonSchema, unwrap: null };
  const { $defs, definitions, $schema, ...body } = schema.jsonSchema;
  return {
    code: schema.code,
    jsonSchema: {
      ...($schema ? { $schema } : {}),
      type: 'array',
      items: body,
      ...($defs ? { $defs } : {}),
      ...(definitions ? { definitions } : {}),
    },
    unwrap: null,
  };
}

/** Response-format names allow letters, digits, `_` and `-`, up to 64 characters. */
function responseName(code: string): string {
  return code.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'output';
}

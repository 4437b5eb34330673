import { buildChatOptions, outputSchemaOf } from './chat-options';
import type { PromptSchema } from './schema-prompt';

const reply: PromptSchema = {
  code: 'REPLY.V1',
  description: null,
  direction: 'O',
  cardinality: 'I',
  jsonSchema: { type: 'object', properties: { answer: { type: 'string' } } },
};

describe('chat options', () => {
  it('sets only the values the configuration sets; tokenSizeMax becomes maxTokens', () => {
    const options = buildChatOptions({
      configuration: { tokenSizeMax: 512, temperature: 0, samplingSizeTopP: null, samplingSizeTopK: undefined },
      outputSchema: null,
      capabilities: ['JM'],
      enableJsonMode: true,
    });
    expect(options).toEqual({ maxTokens: 512, temperature: 0 });
  });

  it('passes the configuration’s stop sequences, and none when its list is empty', () => {
    const withStop = (stop: string[]) =>
      buildChatOptions({ configuration: { stop }, outputSchema: null, capabilities: [], enableJsonMode: true });
    expect(withStop(['\nUser:', '###'])).toEqual({ stop: ['\nUser:', '###'] });
    expect(withStop([])).toEqual({});
  });

  it('has no options without a configuration', () => {
    expect(
      buildChatOptions({ configuration: null, outputSchema: null, capabilities: [], enableJsonMode: true }),
    ).toEqual({});
  });

  it('selects json_schema structured output when the model has the JM capability', () => {
    const options = buildChatOptions({
      configuration: null,
      outputSchema: reply,
      capabilities: ['FC', 'JM'],
      enableJsonMode: true,
    });
    expect(options.responseFormat).toEqual({
      type: 'json_schema',
      name: 'REPLY_V1',
      schema: reply.jsonSchema,
      strict: false,
    });
  });

  it('leaves the response format out without JM or with JSON mode switched off', () => {
    expect(
      buildChatOptions({ configuration: null, outputSchema: reply, capabilities: ['FC'], enableJsonMode: true }),
    ).toEqual({});
    expect(
      buildChatOptions({ configuration: null, outputSchema: reply, capabilities: ['JM'], enableJsonMode: false }),
    ).toEqual({});
  });

  it('wraps a list output in an object root and keeps its definitions at the root', () => {
    const list: PromptSchema = {
      ...reply,
      cardinality: 'L',
      jsonSchema: { type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { type: 'string' } } },
    };
    const options = buildChatOptions({
      configuration: null,
      outputSchema: list,
      capabilities: ['JM'],
      enableJsonMode: true,
    });
    expect(options.responseFormat).toEqual({
      type: 'json_schema',
      name: 'REPLY_V1',
      strict: false,
      schema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'object', properties: { a: { $ref: '#/$defs/a' } } } } },
        required: ['items'],
        $defs: { a: { type: 'string' } },
      },
    });
  });
});

describe('outputSchemaOf: what a final reply is validated against', () => {
  const item = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  const schema = (cardinality: 'I' | 'L', jsonSchema: Record<string, unknown>) => ({
    code: 'T',
    description: null,
    direction: 'O' as const,
    cardinality,
    jsonSchema,
  });

  it('validates against the response format and unwraps what it wrapped', () => {
    const list = schema('L', item);
    const format = buildChatOptions({
      configuration: null,
      outputSchema: list,
      capabilities: ['JM'],
      enableJsonMode: true,
    }).responseFormat;
    expect(outputSchemaOf(list, format)).toEqual({
      code: 'T',
      jsonSchema: { type: 'object', properties: { items: { type: 'array', items: item } }, required: ['items'] },
      unwrap: 'items',
    });
    const single = schema('I', item);
    const direct = buildChatOptions({
      configuration: null,
      outputSchema: single,
      capabilities: ['JM'],
      enableJsonMode: true,
    }).responseFormat;
    expect(outputSchemaOf(single, direct)).toEqual({ code: 'T', jsonSchema: item, unwrap: null });
  });

  it("validates against the action's schema when the model is not forced to JSON, a list as an array", () => {
    expect(outputSchemaOf(schema('I', item), undefined)).toEqual({ code: 'T', jsonSchema: item, unwrap: null });
    expect(outputSchemaOf(schema('L', { ...item, $defs: { X: {} } }), undefined)).toEqual({
      code: 'T',
      jsonSchema: { type: 'array', items: item, $defs: { X: {} } },
      unwrap: null,
    });
  });
});

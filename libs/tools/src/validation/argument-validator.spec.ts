import { ArgumentValidator, MAX_COMPILED } from './argument-validator';

const schema = {
  type: 'object',
  properties: {
    orderId: { type: 'string', pattern: '^[A-Z]{2}-\\d+$' },
    quantity: { type: 'integer', minimum: 1 },
    channel: { enum: ['email', 'sms'] },
    address: { type: 'object', properties: { zip: { type: 'string' } }, required: ['zip'] },
  },
  required: ['orderId'],
  additionalProperties: false,
};

function failureOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a failure');
}

describe('ArgumentValidator', () => {
  const validator = new ArgumentValidator();

  it('returns the parsed arguments when they match the schema', () => {
    expect(validator.parse('{"orderId":"AB-12","quantity":2}', schema)).toEqual({ orderId: 'AB-12', quantity: 2 });
  });

  it('lists every problem with the path of the value to fix', () => {
    const failure = failureOf(() =>
      validator.parse('{"quantity":0,"channel":"fax","address":{},"colour":"red"}', schema),
    );
    expect(failure.code).toBe('INVALID_ARGUMENTS');
    expect(failure.message).toContain('- /orderId: is required');
    expect(failure.message).toContain('- /quantity: must be >= 1');
    expect(failure.message).toContain('- /channel: must be equal to one of the allowed values ("email", "sms")');
    expect(failure.message).toContain('- /address/zip: is required');
    expect(failure.message).toContain('- /colour: is not a parameter of this tool');
  });

  it('rejects text that is not JSON', () => {
    const failure = failureOf(() => validator.parse('{"orderId": ', schema));
    expect(failure.code).toBe('INVALID_ARGUMENTS');
    expect(failure.message).toMatch(/not valid JSON/);
  });

  it('rejects JSON that is not an object', () => {
    expect(failureOf(() => validator.parse('["AB-1"]', schema)).message).toMatch(/one JSON object/);
  });

  it('treats empty arguments as an empty object', () => {
    expect(validator.parse('', { type: 'object' })).toEqual({});
  });

  it('validates 2020-12 schemas as MCP servers publish them', () => {
    const mcpSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'number' } },
      required: ['a'],
    };
    expect(validator.parse('{"a":1}', mcpSchema)).toEqual({ a: 1 });
    expect(failureOf(() => validator.parse('{"a":"one"}', mcpSchema)).message).toContain('- /a: must be number');
  });

  it('reports a broken tool schema as the tool being unavailable, not as the model’s fault', () => {
    expect(failureOf(() => validator.parse('{}', { type: 'nonsense' })).code).toBe('UNAVAILABLE');
  });

  it('keeps at most MAX_COMPILED compiled schemas, in its own map and in Ajv, and still validates a dropped one', () => {
    const own = new ArgumentValidator();
    const distinct = (i: number) => ({ type: 'object', properties: { [`p${i}`]: { type: 'string' } } });
    for (let i = 0; i < MAX_COMPILED * 3; i++) own.parse(`{"p${i}":"x"}`, distinct(i));
    expect(own.compiledCount).toBe(MAX_COMPILED);
    const ajvCache = (own as unknown as { draft07: { _cache: Map<unknown, unknown> } }).draft07._cache;
    expect(ajvCache.size).toBeLessThanOrEqual(MAX_COMPILED + 10);
    expect(failureOf(() => own.parse('{"p0":1}', distinct(0))).code).toBe('INVALID_ARGUMENTS');
  });
});
